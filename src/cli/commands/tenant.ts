import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { errorMessage, isToolcellError, ToolErrorType, type ErrorCode } from '../../errors.js';

const CLUSTER_CODES = new Set<ErrorCode>([
  ToolErrorType.TENANT_NOT_FOUND,
  ToolErrorType.NODE_NOT_SERVING,
  ToolErrorType.TENANT_MOVE_REFUSED,
  ToolErrorType.TENANT_MOVE_FAILED,
]);
import {
  emptyTenantsFile,
  generateApiKey,
  namedLimits,
  readTenantsFile,
  resolveLimits,
  resolveTenantNetwork,
  resolveTenantRuntime,
  TENANT_NAME,
  TENANT_NAME_RULE,
  workspaceOverlap,
  writeTenantsFile,
  type EtcdConnectionOptions,
  type TenantsFile,
} from '../../hosting/index.js';
import { escapeCell, escapeText, terminalJson } from '../../ui/escape-text.js';
import { defaultDataDir } from './serve-hosting.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { applyTenantFields, TENANT_FIELDS, UsageError } from './tenant-fields.js';
import { registerTenantSecretCommand } from './tenant-secret.js';
import { registerTenantImageCommand } from './tenant-image.js';
import { addEtcdOptions, etcdConnectionFrom, type EtcdCliOptions } from './cluster-options.js';
import { addClusterTenant, moveClusterTenant, readClusterTenantsOnce, removeClusterTenant, revokeClusterKeys, setClusterTenant } from './tenant-cluster.js';

interface FileOption {
  tenants: string;
}

/** add, set, revoke, remove and list also work on a cluster's tenants (--etcd, tenant-cluster.ts) instead of a file. */
const tenantsOrClusterOption = () =>
  new Option('--tenants <file>', 'the tenants file (JSON, written with mode 0600); or --etcd for a cluster').env('TOOLCELL_TENANTS');

/** add, set, revoke and remove with --etcd: how long to wait for every serving node to enforce the change (tenant-cluster.ts). */
const waitSecondsOption = () =>
  new Option(
    '--wait-seconds <n>',
    'with --etcd: how long to wait for every serving node to enforce the change (default 30; the change is made either way)',
  ).argParser(toSeconds(3600));

/** Registers `toolcell tenant add|set|list|revoke|remove`: the tenants file of `toolcell serve --tenants`, without editing hashes by hand. */
export function registerTenantCommand(program: Command): void {
  const tenant = program
    .command('tenant')
    .description(
      'Manage the tenants file of a hosting server (toolcell serve --http … --tenants FILE): tenants, their API keys and limits, their secrets (tenant secret) and sandbox images (tenant image).',
    );

  const add = tenant
    .command('add <name>')
    .description('Create a tenant, or add a key to an existing one; prints the new API key, alone on one line, once.')
    .addOption(tenantsOrClusterOption())
    .addOption(dataDirOption())
    .option('--node <name>', 'with --etcd: the node the new tenant lives on (default: the serving node with the fewest tenants, then sessions)')
    .addOption(waitSecondsOption());
  addEtcdOptions(add, 'instead of --tenants');
  for (const field of TENANT_FIELDS) add.addOption(field.option());
  add
    .addHelpText(
      'after',
      `
The key (tc_<id>_<secret>) is printed on stdout and nowhere else; only its
SHA-256 hash is stored. Keep it: it cannot be shown again. A running server
picks the change up within about a second (policies and network for new sessions).
To change a tenant without a new key, use toolcell tenant set.

A new tenant gets a uid of its own (from 1900000000 up, never one a removed
tenant had): its commands run as it, and its workspace belongs to it.

Policy files are checked now and read again whenever the tenants file
changes. A tenant's rules are judged as a layer over the operator's: the
stricter verdict wins, so an operator deny always holds, a tenant deny holds
for that tenant, and a tenant allow counts only where the operator's rules
say nothing. Where nobody can be asked, ask_user refuses the call.
Without --network-allow (or "network" in the file's defaults) the tenant's
sandboxes have no network; the operator's own sandbox.network never applies.

A --workspace must not meet another tenant's: not inside, around or equal to
one (after symlinks), and not in or around the server's data directory
(--data-dir), where the default workspaces are; nor may it hold the tenants
file or a policy file. Such an add is refused and nothing is written.

Examples:
  toolcell tenant add acme --tenants /srv/toolcell/tenants.json --limit sessions=2 --limit memory=512m
  KEY=$(toolcell tenant add acme --tenants tenants.json)
  toolcell tenant add acme --tenants tenants.json --policy /srv/policies/acme.toml --network-allow registry.npmjs.org --network-allow '*.pythonhosted.org'
  toolcell tenant add acme --tenants tenants.json --runtime runsc   # gVisor for this tenant's sandboxes`,
    )
    .action(async (name: string, options: FileOption & Record<string, unknown>) => {
      process.exitCode = await run('add', async () => {
        checkName(name);
        const cluster = clusterOf(options);
        if (cluster !== undefined) return addClusterTenant(cluster, name, options);
        const file = resolve(tenantsFileOf(options));
        const content = (await readTenantsFile(file, { missingOk: true })) ?? emptyTenantsFile();
        const existing = content.tenants[name];
        const { entry } = applyTenantFields(existing ?? { keys: [] }, options);
        const key = generateApiKey();
        entry.keys.push({ id: key.id, hash: key.hash, createdAt: new Date().toISOString() });
        content.tenants[name] = entry;
        await refuseOverlap(content, file, name, options);
        await writeTenantsFile(file, content);
        process.stdout.write(`${key.key}\n`);
        process.stderr.write(
          escapeLine(`toolcell tenant: ${existing ? 'added key' : 'created tenant'} ${name} (key id ${key.id}, uid ${content.tenants[name]!.uid}) in ${file}`),
        );
      });
    });

  const set = tenant
    .command('set <name>')
    .description("Change an existing tenant's limits, policy files, network, runtime or workspace; prints no key.")
    .addOption(tenantsOrClusterOption())
    .addOption(dataDirOption())
    .addOption(waitSecondsOption());
  addEtcdOptions(set, 'instead of --tenants');
  for (const field of TENANT_FIELDS) set.addOption(field.option());
  set
    .addHelpText(
      'after',
      `
Only what is given changes: --limit sets those limits and keeps the others
(key=default drops the tenant's own value, so the file's defaults apply);
--policy and --network-allow replace the tenant's list. An unknown tenant or a
bad value is refused (exit 2) and the file is left as it was. A running server
picks the change up within about a second, as for tenant add: limits for new
sessions (and calls), policies, network and runtime for new sessions.
With --etcd the change is one compare-and-swap on the cluster's tenants, and
every node applies it as one host does (--workspace and --policy name files
on one machine and are refused there). add, set, revoke and remove with --etcd
return once every serving node enforces the change (at most --wait-seconds,
default 30; a node still behind then is named, and takes it as soon as it
reaches etcd: the change is made either way).

Examples:
  toolcell tenant set acme --tenants /srv/toolcell/tenants.json --limit sessions=8 --limit memory=1g
  toolcell tenant set acme --tenants tenants.json --network-allow registry.npmjs.org --network-allow github.com:443
  toolcell tenant set acme --tenants tenants.json --limit idleSeconds=default
  toolcell tenant set acme --tenants tenants.json --runtime runsc   # gVisor from its next session on
  toolcell tenant set acme --etcd https://10.0.0.1:2379 --etcd-ca ca.pem --etcd-cert me.pem --etcd-key me-key.pem --limit sessions=8`,
    )
    .action(async (name: string, options: FileOption & Record<string, unknown>) => {
      process.exitCode = await run('set', async () => {
        const cluster = clusterOf(options);
        if (cluster !== undefined) return setClusterTenant(cluster, name, options);
        const file = resolve(tenantsFileOf(options));
        const content = await load(file);
        const existing = content.tenants[name];
        if (!existing) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${file} (toolcell tenant add creates one)`);
        const { entry, changed } = applyTenantFields(existing, options);
        if (changed.length === 0) throw new UsageError(`nothing to change: give ${TENANT_FIELDS.map((field) => field.option().long).join(', ')}`);
        content.tenants[name] = entry;
        await refuseOverlap(content, file, name, options);
        await writeTenantsFile(file, content);
        process.stderr.write(`toolcell tenant: changed ${name} (${changed.join(', ')}) in ${file}\n`);
      });
    });

  const list = tenant
    .command('list')
    .description('List tenants: key ids and whether each is revoked, workspace and limits (with --etcd, the node each lives on). Never a hash or a key.')
    .addOption(tenantsOrClusterOption())
    .option(
      '--json',
      'print one JSON object: {tenants: [{name, uid, workspace, keys: [{id, createdAt, revoked}], limits, policies, network, runtime, node?}]}',
    );
  addEtcdOptions(list, 'instead of --tenants').action(async (options: FileOption & Record<string, unknown> & { json?: boolean }) => {
    process.exitCode = await run('list', async () => {
      const cluster = clusterOf(options);
      const { content, placement } =
        cluster !== undefined ? await readClusterTenantsOnce(cluster) : { content: await load(tenantsFileOf(options)), placement: undefined };
      const tenants = Object.entries(content.tenants).map(([name, entry]) => ({
        name,
        ...(placement !== undefined ? { node: placement[name] ?? null } : {}),
        uid: entry.uid ?? null,
        workspace: entry.workspace ?? null,
        keys: entry.keys.map((key) => ({ id: key.id, createdAt: key.createdAt, revoked: key.revokedAt !== undefined })),
        limits: namedLimits(resolveLimits(content.defaults?.limits, entry.limits)),
        policies: [...(content.defaults?.policies ?? []), ...(entry.policies ?? [])],
        network: (resolveTenantNetwork(content.defaults?.network, entry.network) ?? 'none') as readonly string[] | 'none',
        runtime: resolveTenantRuntime(content.defaults?.runtime, entry.runtime) ?? null,
      }));
      if (options.json) return void process.stdout.write(`${terminalJson({ tenants })}\n`);
      if (tenants.length === 0) return void process.stdout.write('no tenants\n');
      // The file may have been edited by hand: every value is escaped and quoted where it holds a space (escapeCell).
      const cell = (value: unknown) => escapeCell(String(value));
      for (const entry of tenants) {
        process.stdout.write(
          `${cell(entry.name)}${entry.uid !== null ? `  uid ${entry.uid}` : ''}${'node' in entry ? `  node ${cell(entry.node ?? 'none')}` : ''}${entry.workspace ? `  workspace ${cell(entry.workspace)}` : ''}\n`,
        );
        for (const key of entry.keys) process.stdout.write(`  key ${cell(key.id)}  created ${cell(key.createdAt)}${key.revoked ? '  REVOKED' : ''}\n`);
        process.stdout.write(
          `  limits ${Object.entries(entry.limits)
            .map(([limit, value]) => `${cell(limit)}=${cell(value)}`)
            .join(' ')}\n`,
        );
        for (const policy of entry.policies) process.stdout.write(`  policy ${cell(policy)}\n`);
        process.stdout.write(`  network ${entry.network === 'none' ? 'none' : `allow ${entry.network.map(cell).join(' ')}`}\n`);
        process.stdout.write(`  runtime ${entry.runtime !== null ? cell(entry.runtime) : "the server's"}\n`);
      }
    });
  });

  const revoke = tenant
    .command('revoke <name>')
    .description(
      'Revoke one key of a tenant (--key ID), or all its keys; a running server refuses them within about a second (with --etcd, the command returns once every serving node does).',
    )
    .addOption(tenantsOrClusterOption())
    .option('--key <id>', 'the key id to revoke (see toolcell tenant list)')
    .addOption(waitSecondsOption());
  addEtcdOptions(revoke, 'instead of --tenants').action(async (name: string, options: FileOption & Record<string, unknown> & { key?: string }) => {
    process.exitCode = await run('revoke', async () => {
      const cluster = clusterOf(options);
      if (cluster !== undefined) return revokeClusterKeys(cluster, name, options);
      const content = await load(tenantsFileOf(options));
      const entry = content.tenants[name];
      if (!entry) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${tenantsFileOf(options)}`);
      const targets = entry.keys.filter((key) => options.key === undefined || key.id === options.key);
      if (targets.length === 0) throw new UsageError(`tenant ${name} has no key ${JSON.stringify(options.key)}`);
      const now = new Date().toISOString();
      for (const key of targets) key.revokedAt ??= now;
      await writeTenantsFile(resolve(tenantsFileOf(options)), content);
      process.stderr.write(escapeLine(`toolcell tenant: revoked ${targets.map((key) => key.id).join(', ')} of ${name}`));
    });
  });

  const remove = tenant
    .command('remove <name>')
    .description(
      "Remove a tenant and its keys; a running server closes its live sessions. Its workspace is left on disk, and its uid is never given to another tenant. With --etcd, its node also deletes its workspace (the tenant's name can be added again once it has).",
    )
    .addOption(tenantsOrClusterOption())
    .addOption(waitSecondsOption());
  addEtcdOptions(remove, 'instead of --tenants').action(async (name: string, options: FileOption & Record<string, unknown>) => {
    process.exitCode = await run('remove', async () => {
      const cluster = clusterOf(options);
      if (cluster !== undefined) return removeClusterTenant(cluster, name, options);
      const file = tenantsFileOf(options);
      const content = await load(file);
      if (!content.tenants[name]) throw new UsageError(`no tenant ${JSON.stringify(name)} in ${file}`);
      delete content.tenants[name];
      await writeTenantsFile(resolve(file), content);
      process.stderr.write(escapeLine(`toolcell tenant: removed ${name}`));
    });
  });

  registerTenantMoveCommand(tenant);

  registerTenantSecretCommand(tenant);
  registerTenantImageCommand(tenant);
}

function checkName(name: string): void {
  if (!TENANT_NAME.test(name)) throw new UsageError(`tenant name ${JSON.stringify(name)} ${TENANT_NAME_RULE}`);
}

/** The --tenants file, required where no --etcd was given. */
function tenantsFileOf(options: { tenants?: string }): string {
  if (options.tenants === undefined) throw new UsageError('give --tenants FILE (or --etcd URLS with its TLS files, for a cluster)');
  return options.tenants;
}

/** The cluster's etcd when --etcd is given (then --tenants must not be). */
function clusterOf(options: Record<string, unknown>): EtcdConnectionOptions | undefined {
  const etcd = etcdConnectionFrom(options as EtcdCliOptions);
  if (typeof etcd === 'string') throw new UsageError(etcd);
  if (etcd !== undefined && options.tenants !== undefined) throw new UsageError('give --tenants FILE or --etcd URLS, not both');
  if (etcd === undefined && options.node !== undefined) throw new UsageError('--node needs --etcd URLS (a tenant lives on a node of a cluster)');
  if (etcd === undefined && options.waitSeconds !== undefined) throw new UsageError('--wait-seconds needs --etcd URLS (it waits for the nodes of a cluster)');
  return etcd;
}

async function load(file: string): Promise<TenantsFile> {
  return (await readTenantsFile(resolve(file)))!;
}

/** A line for stderr: names and paths come from the command line and the file, and are escaped like every value printed. */
function escapeLine(text: string): string {
  return `${escapeText(text)}\n`;
}

async function run(command: string, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return EXIT_OK;
  } catch (error) {
    // A cluster's refusals carry a stable code, said with the message (tenant move's exit codes name them).
    const code = isToolcellError(error) && CLUSTER_CODES.has(error.code) ? ` [${error.code}]` : '';
    process.stderr.write(escapeLine(`toolcell tenant ${command}: ${errorMessage(error)}${code}`));
    if (isToolcellError(error) && error.code === ToolErrorType.TENANT_MOVE_FAILED) return EXIT_FAILURE;
    return error instanceof UsageError || isToolcellError(error) ? EXIT_USAGE : EXIT_FAILURE;
  }
}

function dataDirOption(): Option {
  return new Option(
    '--data-dir <dir>',
    "the server's --data-dir, where default workspaces are: a --workspace in it, or containing it, is refused (default ~/.toolcell/hosting)",
  );
}

/** The server refuses a file whose workspaces meet on disk (after symlinks): refused here first, nothing written. */
async function refuseOverlap(content: TenantsFile, file: string, name: string, options: Record<string, unknown>): Promise<void> {
  const dataDir = typeof options.dataDir === 'string' ? options.dataDir : defaultDataDir();
  const overlap = await workspaceOverlap(content, { dataDir: resolve(dataDir), tenantsFile: file, first: name });
  if (overlap !== undefined) throw new UsageError(overlap);
}

/** `toolcell tenant move NAME --node N --etcd …`: a cluster only (hosting/cluster/tenant-moves.ts). */
function registerTenantMoveCommand(tenant: Command): void {
  const move = tenant
    .command('move <name>')
    .description('Move a tenant to another node of the cluster: drains its sessions, copies its workspace there, re-pins it; prints the node it is on.')
    .option('--node <name>', 'the node the tenant goes to (it must be serving)')
    .option('--abort', 'give up the move recorded for the tenant (before it is re-pinned): it stays where it was')
    .option('--drain-seconds <n>', "how long the tenant's running calls may finish on the old node before its sessions close", toSeconds(3600), 30)
    .option('--wait-seconds <n>', 'how long to wait for the move to finish (it goes on without the command)', toSeconds(86_400), 600);
  addEtcdOptions(move, 'required')
    .addHelpText(
      'after',
      `
Each step is recorded in etcd and done by the nodes themselves: the old node
refuses the tenant's new sessions (503 with Retry-After, on every node),
lets running calls finish for --drain-seconds, closes its sessions and
unmounts its disk; the new node fetches the disk image from the old one over
their mutually authenticated TLS link (the cluster's CA), checks its size and
SHA-256, and re-pins the tenant in one transaction; it puts the copy in
place and the tenant's sessions open there; only then the old node deletes
its copy. If this command, or either node, stops midway, nothing is lost:
run the command again to wait for the move (the nodes resume it), or give it
up with --abort while it has not been re-pinned.

Exit codes: 0 moved (stdout: the node), 1 the move did not finish within
--wait-seconds (tenant_move_failed: it goes on), 2 refused (tenant_not_found,
node_not_serving, tenant_move_refused: the same node, another move running,
an abort after re-pinning) or a usage error.

Examples:
  toolcell tenant move acme --node node-2 --etcd https://10.0.0.1:2379 --etcd-ca ca.pem --etcd-cert me.pem --etcd-key me-key.pem
  toolcell tenant move acme --abort   # with TOOLCELL_ETCD* in the environment`,
    )
    .action(async (name: string, options: Record<string, unknown> & { node?: string; abort?: boolean; drainSeconds: number; waitSeconds: number }) => {
      process.exitCode = await run('move', async () => {
        checkName(name);
        const cluster = etcdConnectionFrom(options as EtcdCliOptions);
        if (typeof cluster === 'string') throw new UsageError(cluster);
        if (cluster === undefined) throw new UsageError('tenant move needs --etcd URLS (with its TLS files): tenants move between the nodes of a cluster');
        await moveClusterTenant(cluster, name, options);
      });
    });
}

function toSeconds(max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) > max) throw new InvalidArgumentError(`must be a whole number of seconds, 0 to ${max}`);
    return Number(value);
  };
}
