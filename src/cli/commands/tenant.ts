import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { errorMessage, isToolcellError } from '../../errors.js';
import { generateApiKey } from '../../hosting/api-key.js';
import { limitsSchema, namedLimits, parseLimitAssignment, resolveLimits, type LimitsInput } from '../../hosting/limits.js';
import { loadPolicyFile } from '../../policy/load-policy-file.js';
import { resolveTenantNetwork, tenantNetworkSchema } from '../../hosting/tenant-policy-fields.js';
import { emptyTenantsFile, readTenantsFile, TENANT_NAME, TENANT_NAME_RULE, writeTenantsFile, type TenantsFile } from '../../hosting/tenants-file.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';

interface FileOption {
  tenants: string;
}

const tenantsOption = () => new Option('--tenants <file>', 'the tenants file (JSON, written with mode 0600)').env('TOOLCELL_TENANTS').makeOptionMandatory();

/** Registers `toolcell tenant add|list|revoke|remove`: the tenants file of `toolcell serve --tenants`, without editing hashes by hand. */
export function registerTenantCommand(program: Command): void {
  const tenant = program
    .command('tenant')
    .description('Manage the tenants file of a hosting server (toolcell serve --http … --tenants FILE): tenants, their API keys and limits.');

  tenant
    .command('add <name>')
    .description('Create a tenant, or add a key to an existing one; prints the new API key, alone on one line, once.')
    .addOption(tenantsOption())
    .option('--workspace <dir>', "the tenant's workspace (default <data-dir>/tenants/<name>/workspace on the server)")
    .option(
      '--limit <key=value>',
      'a limit for this tenant, repeatable: sessions, concurrentCalls, callsPerMinute, memory (512m), cpus, pids, diskBytes (1g), commandTimeoutSeconds, idleSeconds, maxSessionSeconds',
      collectLimit,
      {},
    )
    .option(
      '--policy <file>',
      "a policy file (TOML [[rule]] tables) for this tenant's calls, over the operator's rules; repeatable; replaces the tenant's list",
      collectString,
    )
    .option(
      '--network-allow <entry>',
      "a host its sandboxes may reach through its own egress proxy (host, *.domain, IP or CIDR, optional :port, as sandbox.network.allow); repeatable; replaces the tenant's list (default: no network)",
      collectString,
    )
    .addHelpText(
      'after',
      `
The key (tc_<id>_<secret>) is printed on stdout and nowhere else; only its
SHA-256 hash is stored. Keep it: it cannot be shown again. A running server
picks the change up within about a second (policies and network for new sessions).

A new tenant gets a uid of its own (from 1900000000 up, never one a removed
tenant had): its commands run as it, and its workspace belongs to it.

Policy files are checked now and read again whenever the tenants file
changes. A tenant's rules are judged as a layer over the operator's: the
stricter verdict wins, so an operator deny always holds, a tenant deny holds
for that tenant, and a tenant allow counts only where the operator's rules
say nothing. Where nobody can be asked, ask_user refuses the call.
Without --network-allow (or "network" in the file's defaults) the tenant's
sandboxes have no network; the operator's own sandbox.network never applies.

Examples:
  toolcell tenant add acme --tenants /srv/toolcell/tenants.json --limit sessions=2 --limit memory=512m
  KEY=$(toolcell tenant add acme --tenants tenants.json)
  toolcell tenant add acme --tenants tenants.json --policy /srv/policies/acme.toml --network-allow registry.npmjs.org --network-allow '*.pythonhosted.org'`,
    )
    .action(async (name: string, options: FileOption & { workspace?: string; limit: LimitsInput; policy?: string[]; networkAllow?: string[] }) => {
      process.exitCode = await run('add', async () => {
        checkName(name);
        const file = resolve(options.tenants);
        const content = (await readTenantsFile(file, { missingOk: true })) ?? emptyTenantsFile();
        const existing = content.tenants[name];
        const limits = checkLimits({ ...existing?.limits, ...options.limit });
        const policies = options.policy ? checkPolicies(options.policy) : existing?.policies;
        const network = options.networkAllow ? checkNetwork(options.networkAllow) : existing?.network;
        const key = generateApiKey();
        content.tenants[name] = {
          ...(existing?.uid !== undefined ? { uid: existing.uid } : {}),
          ...(options.workspace !== undefined ? { workspace: resolve(options.workspace) } : existing?.workspace ? { workspace: existing.workspace } : {}),
          ...(Object.keys(limits).length > 0 ? { limits } : {}),
          ...(policies !== undefined ? { policies } : {}),
          ...(network !== undefined ? { network } : {}),
          keys: [...(existing?.keys ?? []), { id: key.id, hash: key.hash, createdAt: new Date().toISOString() }],
        };
        await writeTenantsFile(file, content);
        process.stdout.write(`${key.key}\n`);
        process.stderr.write(
          `toolcell tenant: ${existing ? 'added key' : 'created tenant'} ${name} (key id ${key.id}, uid ${content.tenants[name]!.uid}) in ${file}\n`,
        );
      });
    });

  tenant
    .command('list')
    .description('List tenants: key ids and whether each is revoked, workspace and limits. Never a hash or a key.')
    .addOption(tenantsOption())
    .option('--json', 'print one JSON object: {tenants: [{name, uid, workspace, keys: [{id, createdAt, revoked}], limits, policies, network}]}')
    .action(async (options: FileOption & { json?: boolean }) => {
      process.exitCode = await run('list', async () => {
        const content = await load(options.tenants);
        const tenants = Object.entries(content.tenants).map(([name, entry]) => ({
          name,
          uid: entry.uid ?? null,
          workspace: entry.workspace ?? null,
          keys: entry.keys.map((key) => ({ id: key.id, createdAt: key.createdAt, revoked: key.revokedAt !== undefined })),
          limits: namedLimits(resolveLimits(content.defaults?.limits, entry.limits)),
          policies: [...(content.defaults?.policies ?? []), ...(entry.policies ?? [])],
          network: (resolveTenantNetwork(content.defaults?.network, entry.network) ?? 'none') as readonly string[] | 'none',
        }));
        if (options.json) return void process.stdout.write(`${JSON.stringify({ tenants }, null, 2)}\n`);
        if (tenants.length === 0) return void process.stdout.write('no tenants\n');
        for (const entry of tenants) {
          process.stdout.write(`${entry.name}${entry.uid !== null ? `  uid ${entry.uid}` : ''}${entry.workspace ? `  workspace ${entry.workspace}` : ''}\n`);
          for (const key of entry.keys) process.stdout.write(`  key ${key.id}  created ${key.createdAt}${key.revoked ? '  REVOKED' : ''}\n`);
          process.stdout.write(
            `  limits ${Object.entries(entry.limits)
              .map(([limit, value]) => `${limit}=${String(value)}`)
              .join(' ')}\n`,
          );
          for (const policy of entry.policies) process.stdout.write(`  policy ${policy}\n`);
          process.stdout.write(`  network ${entry.network === 'none' ? 'none' : `allow ${entry.network.join(' ')}`}\n`);
        }
      });
    });

  tenant
    .command('revoke <name>')
    .description('Revoke one key of a tenant (--key ID), or all its keys; a running server refuses them within about a second.')
    .addOption(tenantsOption())
    .option('--key <id>', 'the key id to revoke (see toolcell tenant list)')
    .action(async (name: string, options: FileOption & { key?: string }) => {
      process.exitCode = await run('revoke', async () => {
        const content = await load(options.tenants);
        const entry = content.tenants[name];
        if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${options.tenants}`);
        const targets = entry.keys.filter((key) => options.key === undefined || key.id === options.key);
        if (targets.length === 0) throw new UsageError(`tenant ${name} has no key ${JSON.stringify(options.key)}`);
        const now = new Date().toISOString();
        for (const key of targets) key.revokedAt ??= now;
        await writeTenantsFile(resolve(options.tenants), content);
        process.stderr.write(`toolcell tenant: revoked ${targets.map((key) => key.id).join(', ')} of ${name}\n`);
      });
    });

  tenant
    .command('remove <name>')
    .description(
      'Remove a tenant and its keys; a running server closes its live sessions. Its workspace is left on disk, and its uid is never given to another tenant.',
    )
    .addOption(tenantsOption())
    .action(async (name: string, options: FileOption) => {
      process.exitCode = await run('remove', async () => {
        const content = await load(options.tenants);
        if (!content.tenants[name]) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${options.tenants}`);
        delete content.tenants[name];
        await writeTenantsFile(resolve(options.tenants), content);
        process.stderr.write(`toolcell tenant: removed ${name}\n`);
      });
    });
}

class UsageError extends Error {}

function checkName(name: string): void {
  if (!TENANT_NAME.test(name)) throw new UsageError(`tenant name ${JSON.stringify(name)} ${TENANT_NAME_RULE}`);
}

function collectLimit(value: string, previous: LimitsInput): LimitsInput {
  try {
    const [name, parsed] = parseLimitAssignment(value);
    return { ...previous, [name]: parsed };
  } catch (error) {
    throw new InvalidArgumentError(errorMessage(error));
  }
}

function collectString(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Absolute paths of policy files that load: a bad one is refused now, not when the server reloads. */
function checkPolicies(files: readonly string[]): string[] {
  return files.map((file) => {
    const path = resolve(file);
    loadPolicyFile(path, { required: true, origin: 'user' });
    return path;
  });
}

function checkNetwork(entries: readonly string[]): { allow: string[] } {
  const result = tenantNetworkSchema.safeParse({ allow: entries });
  if (result.success && result.data !== 'none') return result.data;
  // The union's own message says only "none or {allow}": the entry's problem is one level down.
  const issue = result.error?.issues[0];
  const inner = issue?.code === 'invalid_union' ? issue.errors.flat().find((candidate) => candidate.code === 'custom') : undefined;
  throw new UsageError(`--network-allow: ${inner?.message ?? issue?.message ?? 'is invalid'}`);
}

function checkLimits(limits: Record<string, unknown>): LimitsInput {
  const result = limitsSchema.safeParse(limits);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new UsageError(`--limit ${issue.path.map(String).join('.')} ${issue.message}`);
}

async function load(file: string): Promise<TenantsFile> {
  return (await readTenantsFile(resolve(file)))!;
}

async function run(command: string, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return EXIT_OK;
  } catch (error) {
    process.stderr.write(`toolcell tenant ${command}: ${errorMessage(error)}\n`);
    return error instanceof UsageError || isToolcellError(error) ? EXIT_USAGE : EXIT_FAILURE;
  }
}
