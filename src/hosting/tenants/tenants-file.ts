import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { ToolErrorType, ToolcellError } from '../../errors.js';
import { describeJsonSyntaxError } from '../../config/json-syntax-error.js';
import { writeFileAtomic } from '../../fs/atomic-write.js';
import { limitsSchema } from '../admission/limits.js';
import { tenantNetworkSchema, tenantPoliciesSchema } from './tenant-policy-fields.js';
import { tenantRuntimeSchema } from './tenant-runtime.js';
import { tenantSecretsSchema } from './tenant-secrets.js';
import { assignTenantUids, TENANT_UID_FIRST, TENANT_UID_LAST, tenantUidSchema } from './tenant-uid.js';

/**
 * The tenants file: who may use a hosting server, with which keys, in which
 * workspace and under which limits. JSON, managed by `toolcell tenant …` so
 * nobody edits hashes by hand; the server reloads it when it changes.
 *
 * {"version": 1, "defaults": {"limits": {…}, "policies"?: [...], "network"?: …, "runtime"?: "runsc"},
 *  "nextUid": 1900000001,
 *  "tenants": {"acme": {"uid": 1900000000, "workspace"?: "/srv/acme", "limits"?: {…},
 *              "policies"?: ["/srv/policies/acme.toml"], "network"?: "none" | {"allow": [...]},
 *              "runtime"?: "runsc",
 *              "keys": [{"id", "hash", "createdAt", "revokedAt"?}]}}}
 */

/** A tenant name: used in paths and labels, so a plain lowercase word. */
export const TENANT_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const TENANT_NAME_RULE = 'must be 1-63 characters of a-z 0-9 _ -, starting with a letter or digit';

const keySchema = z.strictObject({
  /** The key's public id, also inside the key itself (`tc_<id>_<secret>`). */
  id: z.string().regex(/^[a-z0-9]{12}$/, { error: 'must be 12 characters of a-z 0-9' }),
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  hash: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be a SHA-256 hash in hex (64 characters)' }),
  createdAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().optional(),
});

/** One tenant's entry; `toolcell tenant add|set` check a field's value with its part of this. */
export const tenantSchema = z.strictObject({
  /** The uid (and gid) its commands run as, its own (tenant-uid.ts); given by `toolcell tenant add`, or by the server when missing. */
  uid: tenantUidSchema.optional(),
  /** An absolute folder; default `<data-dir>/tenants/<name>/workspace`. */
  workspace: z
    .string()
    .refine((path) => path.startsWith('/'), { error: 'must be an absolute path' })
    .optional(),
  limits: limitsSchema.optional(),
  /** Policy files for this tenant's calls, after the defaults' (see tenant-policy.ts). */
  policies: tenantPoliciesSchema.optional(),
  /** What this tenant's sandboxes may reach; replaces the defaults' (see tenant-network.ts). */
  network: tenantNetworkSchema.optional(),
  /** The OCI runtime of this tenant's sandboxes, e.g. `runsc`; replaces the defaults' (see tenant-runtime.ts). */
  runtime: tenantRuntimeSchema.optional(),
  /**
   * The tenant's own sandbox image: a Dockerfile (an absolute path) built FROM
   * toolcell's image by the operator (`toolcell tenant image build`), never by the server.
   */
  image: z.strictObject({ dockerfile: z.string().refine((path) => path.startsWith('/'), { error: 'must be an absolute path' }) }).optional(),
  /** Secrets for the tenant's commands, sealed with the server's key (`toolcell tenant secret set`, secret-box.ts). */
  secrets: tenantSecretsSchema.optional(),
  keys: z.array(keySchema),
});

export const tenantsFileSchema = z
  .strictObject({
    version: z.literal(1),
    defaults: z
      .strictObject({
        limits: limitsSchema.optional(),
        policies: tenantPoliciesSchema.optional(),
        network: tenantNetworkSchema.optional(),
        runtime: tenantRuntimeSchema.optional(),
      })
      .optional(),
    /** The next tenant uid to hand out: it only grows, so a removed tenant's uid is never given again. */
    nextUid: z
      .number()
      .int()
      .min(TENANT_UID_FIRST)
      .max(TENANT_UID_LAST + 1)
      .optional(),
    tenants: z.record(z.string().regex(TENANT_NAME, { error: TENANT_NAME_RULE }), tenantSchema),
  })
  .superRefine((file, context) => {
    // Two tenants in one folder (or one inside the other's) would share files: refused.
    const folders = Object.entries(file.tenants).flatMap(([name, tenant]) => (tenant.workspace ? [[name, tenant.workspace.replace(/\/+$/, '')] as const] : []));
    for (const [name, folder] of folders) {
      const other = folders.find(([otherName, otherFolder]) => otherName !== name && (folder === otherFolder || folder.startsWith(`${otherFolder}/`)));
      if (other)
        context.addIssue({ code: 'custom', path: ['tenants', name, 'workspace'], message: `must not be or lie inside tenant ${other[0]}'s workspace` });
    }
    // Two tenants with one uid would share the kernel's per-user budgets and each other's files.
    const owners = new Map<number, string>();
    for (const [name, tenant] of Object.entries(file.tenants)) {
      if (tenant.uid === undefined) continue;
      const other = owners.get(tenant.uid);
      if (other !== undefined) context.addIssue({ code: 'custom', path: ['tenants', name, 'uid'], message: `must not be tenant ${other}'s uid too` });
      owners.set(tenant.uid, name);
    }
    // The key id finds the tenant in one lookup, so it must be unique across the file.
    const seen = new Set<string>();
    for (const [name, tenant] of Object.entries(file.tenants)) {
      tenant.keys.forEach((key, index) => {
        if (seen.has(key.id)) context.addIssue({ code: 'custom', path: ['tenants', name, 'keys', index, 'id'], message: 'must be unique in the file' });
        seen.add(key.id);
      });
    }
  });

export type TenantsFile = z.infer<typeof tenantsFileSchema>;
export type TenantEntry = TenantsFile['tenants'][string];
export type TenantKey = TenantEntry['keys'][number];

export function emptyTenantsFile(): TenantsFile {
  return { version: 1, defaults: { limits: {} }, tenants: {} };
}

/** Checks parsed JSON; the error names the file and the first wrong field. */
export function parseTenantsFile(file: string, value: unknown): TenantsFile {
  const result = tenantsFileSchema.safeParse(value);
  if (result.success) return result.data;
  const first = result.error.issues[0]!;
  // `network` is a union: a bad allow entry is one level down, under the union's generic message.
  const inner = first.code === 'invalid_union' ? first.errors.flat().find((candidate) => candidate.code === 'custom') : undefined;
  const issue = inner ? ({ ...inner, path: [...first.path, ...inner.path] } as typeof first) : first;
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
  const field = path.length > 0 ? path.map(String).join('.') : '(top level)';
  const message =
    issue.code === 'unrecognized_keys' ? 'is not a known field' : issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
  throw new ToolcellError(ToolErrorType.INVALID_TENANTS_FILE, `Tenants file ${file}: ${field} ${message}`);
}

/**
 * Reads and checks the tenants file. A missing file is `undefined` when
 * `missingOk` (the first `tenant add` creates it), an error otherwise.
 */
export async function readTenantsFile(file: string, options: { missingOk?: boolean } = {}): Promise<TenantsFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && options.missingOk) return undefined;
    throw new ToolcellError(ToolErrorType.INVALID_TENANTS_FILE, `Cannot read tenants file ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ToolcellError(ToolErrorType.INVALID_TENANTS_FILE, `Tenants file ${file} is not valid JSON${describeJsonSyntaxError(text)}.`);
  }
  return parseTenantsFile(file, value);
}

/**
 * Writes the file whole and atomically (readers, the server's watcher
 * included, see the old content or the new), mode 0600: it holds hashes
 * only, but who may log in is nobody else's business. A tenant without a
 * uid is given the next one first (in `content` itself: tenant-uid.ts).
 */
export async function writeTenantsFile(file: string, content: TenantsFile): Promise<void> {
  assignTenantUids(content);
  // Checked before it is written: the commands never leave a file the server would refuse.
  parseTenantsFile(file, content);
  const folder = dirname(file);
  const workspace = { roots: [folder], stateDir: join(folder, '.toolcell') };
  await writeFileAtomic(workspace, join(folder, basename(file)), `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
}
