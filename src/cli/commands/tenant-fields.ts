import { resolve } from 'node:path';
import { InvalidArgumentError, Option } from 'commander';
import type { z } from 'zod';
import { errorMessage } from '../../errors.js';
import { limitsSchema, parseLimitAssignment, tenantNetworkSchema, tenantSchema, type TenantEntry } from '../../hosting/index.js';
import { loadPolicyFile } from '../../policy/load-policy-file.js';

/** Bad input on the command line: exit 2, nothing written. */
export class UsageError extends Error {}

/**
 * One setting of a tenant as `toolcell tenant add` and `tenant set` take it:
 * its flag, and how the checked value goes into the tenant's entry of the
 * tenants file. Both commands are built from TENANT_FIELDS, so a field
 * added there is a flag of both.
 */
export interface TenantField {
  /** The option, made anew for each command that takes it. */
  option(): Option;
  /** Puts `value` (the option's parsed value, never undefined) into `entry`; throws a UsageError naming the flag for a bad one. */
  apply(entry: TenantEntry, value: unknown): void;
}

/**
 * A field whose value is one string the tenants file's own schema checks
 * (`tenantSchema.shape[name]`): `schemaField('runtime', '--runtime <name>',
 * 'the OCI runtime of its containers')` is all a plain field needs.
 */
export function schemaField<Name extends keyof typeof tenantSchema.shape & string>(name: Name, flags: string, description: string): TenantField {
  const option = () => new Option(flags, description);
  return {
    option,
    apply(entry, value) {
      const schema = tenantSchema.shape[name] as z.ZodType;
      const result = schema.safeParse(value);
      if (!result.success) throw new UsageError(`${option().long} ${result.error.issues[0]?.message ?? 'is invalid'}`);
      (entry as Record<string, unknown>)[name] = result.data;
    },
  };
}

const workspace: TenantField = {
  option: () =>
    new Option(
      '--workspace <dir>',
      "the tenant's workspace (default on the server: <data-dir>/workspaces/<name>-<hash>, a capped filesystem, when it runs as root; else <data-dir>/tenants/<name>/workspace)",
    ),
  apply(entry, value) {
    entry.workspace = resolve(value as string);
  },
};

/** `--limit key=value`, repeatable; `key=default` drops the tenant's own value (the file's defaults apply again). */
const limits: TenantField = {
  option: () =>
    new Option(
      '--limit <key=value>',
      "a limit for this tenant, repeatable: sessions, sessionsPerMinute, concurrentCalls, callsPerMinute, requestsPerMinute (all requests), memory (512m), cpus, totalCpus (all sessions together), pids, diskBytes (1g), commandTimeoutSeconds, fileToolTimeoutSeconds, serverCpu (0.25), idleSeconds, abandonedSeconds, maxSessionSeconds; key=default drops the tenant's own value",
    ).argParser(collectLimit),
  apply(entry, value) {
    const merged: Record<string, unknown> = { ...entry.limits };
    for (const [name, given] of Object.entries(value as Record<string, number | string | null>)) {
      if (given === null) delete merged[name];
      else merged[name] = given;
    }
    const checked = limitsSchema.safeParse(merged);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new UsageError(`--limit ${issue.path.map(String).join('.')} ${issue.message}`);
    }
    if (Object.keys(checked.data).length > 0) entry.limits = checked.data;
    else delete entry.limits;
  },
};

const policies: TenantField = {
  option: () =>
    new Option(
      '--policy <file>',
      "a policy file (TOML [[rule]] tables) for this tenant's calls, over the operator's rules; repeatable; replaces the tenant's list",
    ).argParser(collectString),
  apply(entry, value) {
    // Absolute paths of files that load: a bad one is refused now, not when the server reloads.
    entry.policies = (value as string[]).map((file) => {
      const path = resolve(file);
      loadPolicyFile(path, { required: true, origin: 'user' });
      return path;
    });
  },
};

const network: TenantField = {
  option: () =>
    new Option(
      '--network-allow <entry>',
      "a host its sandboxes may reach through its own egress proxy (host, *.domain, IP or CIDR, optional :port, as sandbox.network.allow); repeatable; replaces the tenant's list (default: no network)",
    ).argParser(collectString),
  apply(entry, value) {
    const result = tenantNetworkSchema.safeParse({ allow: value });
    if (result.success) {
      entry.network = result.data;
      return;
    }
    // The union's own message says only "none or {allow}": the entry's problem is one level down.
    const issue = result.error.issues[0];
    const inner = issue?.code === 'invalid_union' ? issue.errors.flat().find((candidate) => candidate.code === 'custom') : undefined;
    throw new UsageError(`--network-allow: ${inner?.message ?? issue?.message ?? 'is invalid'}`);
  },
};

/**
 * What `tenant add` and `tenant set` can change, in the order their help
 * lists them. A new tenant field is one entry here (a plain one is one
 * `schemaField(...)` line), after its place in the tenants file's schema.
 */
export const TENANT_FIELDS: readonly TenantField[] = [
  workspace,
  limits,
  policies,
  network,
  schemaField(
    'runtime',
    '--runtime <name>',
    "OCI runtime of the tenant's sandboxes, e.g. runsc (gVisor); default: the defaults' runtime, else the server's (serve --runtime)",
  ),
];

/**
 * Applies every field given in `options` (commander's values) to a copy of
 * `entry`; resolves with the copy and the long flags that changed it.
 * Throws a UsageError, before anything is written, for a bad value.
 */
export function applyTenantFields(entry: TenantEntry, options: Record<string, unknown>): { entry: TenantEntry; changed: string[] } {
  const copy = structuredClone(entry);
  const changed: string[] = [];
  for (const field of TENANT_FIELDS) {
    const option = field.option();
    const value = options[option.attributeName()];
    if (value === undefined) continue;
    field.apply(copy, value);
    changed.push(option.long!);
  }
  // Keys last, as the file has always been written: the settings read first.
  const { keys, ...settings } = copy;
  return { entry: { ...settings, keys }, changed };
}

function collectLimit(value: string, previous: Record<string, number | string | null> | undefined): Record<string, number | string | null> {
  try {
    const at = value.indexOf('=');
    // The name is checked as for any value; `default` stands for "none of the tenant's own".
    if (at > 0 && value.slice(at + 1).trim() === 'default') return { ...previous, [parseLimitAssignment(`${value.slice(0, at)}=1`)[0]]: null };
    const [name, parsed] = parseLimitAssignment(value);
    return { ...previous, [name]: parsed };
  } catch (error) {
    throw new InvalidArgumentError(errorMessage(error));
  }
}

function collectString(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
