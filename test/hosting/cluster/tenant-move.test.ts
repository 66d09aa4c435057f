/**
 * `toolcell tenant move --etcd` between two real hosting servers on this
 * machine (two nodes of one cluster: their own names, data folders and
 * ports, one real etcd), with the MCP SDK client: the tenant's file follows
 * it, its old copy goes, a move whose command or old node dies midway loses
 * nothing and is resumed or given up, and bad moves are refused with their
 * codes. Also `toolcell hosting sessions --etcd`, listing every node's.
 */
import anyTest, { type TestFn } from 'ava';
import { existsSync } from 'node:fs';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { connectEtcd } from '../../../src/hosting/cluster/etcd-connection.js';
import { readClusterTenants } from '../../../src/hosting/cluster/cluster-tenants.js';
import { tenantSlug } from '../../../src/hosting/tenants/disk/tenant-slug.js';
import { runCli } from '../../helpers/cli.js';
import { connectOverTls, initializeThrough, startClusterNode, type ClusterNode } from '../../helpers/cluster-node.js';
import { eventually, requireDocker } from '../../helpers/docker.js';
import { requireEtcd, startEtcd, type TestEtcd } from '../../helpers/etcd.js';
import { call } from '../../helpers/hosting.js';
import { startTestIssuer } from '../../helpers/oidc-issuer.js';

const test = requireEtcd(await requireDocker(anyTest as TestFn, 'tenant move'), 'tenant move');

const TENANT = 'acme';

function imageOn(node: ClusterNode, tenant = TENANT): string {
  return join(realpathSync(join(node.dataDir, 'hosting')), 'disk-images', `${tenantSlug(tenant)}.ext4`);
}

/** Adds the tenant on `node`; the command returns once every serving node (`nodes`) enforces its key. */
async function addTenant(etcd: TestEtcd, node: string, nodes: ClusterNode[]): Promise<string> {
  const added = await runCli(['tenant', 'add', TENANT, '--node', node, '--limit', 'diskBytes=32m', ...etcd.flags]);
  if (added.code !== 0) throw new Error(`tenant add failed: ${added.stderr}`);
  const enforcing = /in effect on nodes? (.+)$/m.exec(added.stderr)?.[1]?.split(', ') ?? [];
  if (!nodes.every((each) => enforcing.includes(each.name))) throw new Error(`tenant add did not wait for every node: ${added.stderr}`);
  return added.stdout.trim();
}

async function placement(etcd: TestEtcd): Promise<{ node: string | undefined; phase: string | undefined }> {
  const client = connectEtcd(etcd.connection);
  try {
    const { doc } = await readClusterTenants(client);
    return { node: doc.placement[TENANT], phase: doc.moves[TENANT]?.phase };
  } finally {
    client.close();
  }
}

/** The session id a new session opened at `node` gets (the node it lives on is its prefix); the session is ended again. */
async function newSessionVia(node: ClusterNode, key: string, etcd: TestEtcd): Promise<string> {
  const answer = await initializeThrough(node.url, key, etcd.certs.ca);
  await answer.text();
  const id = answer.headers.get('mcp-session-id');
  if (answer.status !== 200 || id === null) throw new Error(`initialize through ${node.name}: ${answer.status}`);
  return id;
}

async function writeThrough(node: ClusterNode, key: string, etcd: TestEtcd, name: string, content: string): Promise<string> {
  const connection = await connectOverTls(node.url, key, etcd.certs.ca);
  try {
    const written = await call(connection.client, 'write_file', { file_path: name, content });
    if (written.errorType !== undefined) throw new Error(`write_file: ${written.text}`);
    return connection.sessionId;
  } finally {
    await connection.close();
  }
}

async function readThrough(node: ClusterNode, key: string, etcd: TestEtcd, name: string): Promise<{ text: string; sessionId: string }> {
  const connection = await connectOverTls(node.url, key, etcd.certs.ca);
  try {
    return { text: (await call(connection.client, 'read_file', { file_path: name })).text, sessionId: connection.sessionId };
  } finally {
    await connection.close();
  }
}

test.serial('a tenant moves with its files: they are read on the new node, the old copy is gone, sessions open there', async (t) => {
  const etcd = await startEtcd(t);
  const n1 = await startClusterNode(t, etcd, 'n1', { tenants: [TENANT] });
  const n2 = await startClusterNode(t, etcd, 'n2', { tenants: [TENANT] });
  const key = await addTenant(etcd, 'n1', [n1, n2]);
  t.regex(await newSessionVia(n2, key, etcd), /^n1\./, "a new session opens on the tenant's node, whichever node it reached");
  await writeThrough(n1, key, etcd, 'notes.txt', 'written on n1\n');
  t.true(existsSync(imageOn(n1)));

  const moved = await runCli(['tenant', 'move', TENANT, '--node', 'n2', ...etcd.flags]);
  t.is(moved.code, 0, moved.stderr);
  t.is(moved.stdout.trim(), 'n2');
  t.regex(moved.stderr, /draining its sessions on the old node.*acme is on node n2/s);
  t.deepEqual(await placement(etcd), { node: 'n2', phase: undefined });
  t.false(existsSync(imageOn(n1)), 'the old copy is deleted once the new one serves');
  t.true(existsSync(imageOn(n2)));

  t.regex(await newSessionVia(n1, key, etcd), /^n2\./, 'its new sessions open on the new node');
  const read = await readThrough(n2, key, etcd, 'notes.txt');
  t.regex(read.text, /written on n1/);

  // Listing: a session open on n2 shows with its node, through etcd alone.
  const open = await connectOverTls(n2.url, key, etcd.certs.ca);
  t.teardown(() => open.close());
  const listed = await eventually(async () => {
    const sessions = await runCli(['hosting', 'sessions', '--json', ...etcd.flags]);
    const parsed = JSON.parse(sessions.stdout || '[]') as Array<{ id: string; node: string; tenant: string }>;
    return parsed.some((session) => session.id === open.sessionId && session.node === 'n2' && session.tenant === TENANT);
  }, 30_000);
  t.true(listed, 'hosting sessions --etcd lists the session with its node');
  const table = await runCli(['hosting', 'sessions', ...etcd.flags]);
  t.regex(table.stdout, /^NODE\s+SESSION\s+TENANT/m);
  t.regex(table.stdout, new RegExp(`^n2\\s+${open.sessionId.replace('.', '\\.')}\\s+${TENANT}`, 'm'));
});

test.serial('bad moves are refused with stable codes and change nothing', async (t) => {
  const etcd = await startEtcd(t);
  const n1 = await startClusterNode(t, etcd, 'n1', { tenants: [TENANT] });
  await addTenant(etcd, 'n1', [n1]);
  const same = await runCli(['tenant', 'move', TENANT, '--node', 'n1', ...etcd.flags]);
  t.is(same.code, 2);
  t.regex(same.stderr, /on node n1 already.*\[tenant_move_refused\]/);
  const unknown = await runCli(['tenant', 'move', 'nobody', '--node', 'n1', ...etcd.flags]);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /\[tenant_not_found\]/);
  const absent = await runCli(['tenant', 'move', TENANT, '--node', 'n9', ...etcd.flags]);
  t.is(absent.code, 2);
  t.regex(absent.stderr, /no node n9 is serving.*serving: n1.*\[node_not_serving\]/);
  const noMove = await runCli(['tenant', 'move', TENANT, '--abort', ...etcd.flags]);
  t.is(noMove.code, 2);
  t.regex(noMove.stderr, /not being moved.*\[tenant_move_refused\]/);
  const noEtcd = await runCli(['tenant', 'move', TENANT, '--node', 'n1']);
  t.is(noEtcd.code, 2);
  t.regex(noEtcd.stderr, /needs --etcd/);
  t.deepEqual(await placement(etcd), { node: 'n1', phase: undefined });
});

test.serial('the old node killed before the move: the move waits for it, and resumes when it is back; nothing is lost', async (t) => {
  const etcd = await startEtcd(t);
  const n1 = await startClusterNode(t, etcd, 'n1', { tenants: [TENANT] });
  const n2 = await startClusterNode(t, etcd, 'n2', { tenants: [TENANT] });
  const key = await addTenant(etcd, 'n1', [n1, n2]);
  await writeThrough(n1, key, etcd, 'kept.txt', 'survives a crash\n');
  await n1.stop('SIGKILL');

  const waited = await runCli(['tenant', 'move', TENANT, '--node', 'n2', '--wait-seconds', '3', ...etcd.flags]);
  t.is(waited.code, 1, waited.stderr);
  t.regex(waited.stderr, /still at draining.*run the command again.*\[tenant_move_failed\]/s);
  t.deepEqual(await placement(etcd), { node: 'n1', phase: 'draining' });
  // Meanwhile the tenant's new sessions get 503 with Retry-After, naming no host.
  const refused = await initializeThrough(n2.url, key, etcd.certs.ca);
  t.is(refused.status, 503);
  t.truthy(refused.headers.get('retry-after'));
  t.notRegex(await refused.text(), /127\.0\.0\.1|n1/);

  // The command run again waits on the recorded move (n1 still down), and sees it finish once n1 is back.
  let rerunSaid = '';
  const rerun = runCli(['tenant', 'move', TENANT, '--node', 'n2', ...etcd.flags], { onStderr: (text) => (rerunSaid = text) });
  t.true(await eventually(async () => /moving acme from node n1 to node n2/.test(rerunSaid), 30_000), rerunSaid);
  await n1.start();
  const resumed = await rerun;
  t.is(resumed.code, 0, resumed.stderr);
  t.is(resumed.stdout.trim(), 'n2');
  t.false(existsSync(imageOn(n1)));
  const read = await readThrough(n2, key, etcd, 'kept.txt');
  t.regex(read.sessionId, /^n2\./);
  t.regex(read.text, /survives a crash/);
});

test.serial('a move whose command is killed during the drain is given up with --abort: the running call finishes, the tenant stays', async (t) => {
  const etcd = await startEtcd(t);
  const n1 = await startClusterNode(t, etcd, 'n1', { tenants: [TENANT] });
  const n2 = await startClusterNode(t, etcd, 'n2', { tenants: [TENANT] });
  const key = await addTenant(etcd, 'n1', [n1, n2]);
  await writeThrough(n1, key, etcd, 'stays.txt', 'never moved\n');
  const busy = await connectOverTls(n1.url, key, etcd.certs.ca);
  t.teardown(() => busy.close());
  const running = call(busy.client, 'run_shell_command', { command: 'sleep 8; echo finished-after-abort' });
  await new Promise((resolve) => setTimeout(resolve, 1500));

  // The command dies once the move is recorded; the old node is draining (the call runs, 300 s allowed).
  const killed = await runCli(['tenant', 'move', TENANT, '--node', 'n2', '--drain-seconds', '300', ...etcd.flags], {
    onStderr: (text, kill) => {
      if (/draining its sessions/.test(text)) kill('SIGKILL');
    },
  });
  t.is(killed.signal, 'SIGKILL');
  t.deepEqual(await placement(etcd), { node: 'n1', phase: 'draining' });

  const aborted = await runCli(['tenant', 'move', TENANT, '--abort', ...etcd.flags]);
  t.is(aborted.code, 0, aborted.stderr);
  t.is(aborted.stdout.trim(), 'n1');
  t.regex((await running).text, /finished-after-abort/, 'the running call was not cut by the drain given up');
  t.deepEqual(await placement(etcd), { node: 'n1', phase: undefined });
  const read = await readThrough(n1, key, etcd, 'stays.txt');
  t.regex(read.sessionId, /^n1\./);
  t.regex(read.text, /never moved/);
});

test.serial("an OIDC tenant's new session opens on its node too: the token is checked on the node reached, then again on the tenant's", async (t) => {
  const audience = 'toolcell-cluster-test';
  const issuer = await startTestIssuer(audience);
  t.teardown(() => issuer.close());
  const etcd = await startEtcd(t);
  // Every node is the same resource: the same issuer, public URL and audience.
  const oidc = ['--oidc-issuer', issuer.issuer, '--public-url', 'https://localhost', '--audience', audience, '--tenant-claim', 'org'];
  const n1 = await startClusterNode(t, etcd, 'n1', { tenants: [TENANT], extra: oidc });
  const n2 = await startClusterNode(t, etcd, 'n2', { tenants: [TENANT], extra: oidc });
  await addTenant(etcd, 'n2', [n1, n2]);
  const token = await issuer.sign({ org: TENANT, sub: 'alice', aud: audience });
  t.regex(await newSessionVia(n1, token, etcd), /^n2\./, 'opened on the tenant node, not where it arrived');
  const forged = await initializeThrough(n1.url, await issuer.sign({ org: TENANT, sub: 'mallory', aud: audience }, { key: issuer.otherKey }), etcd.certs.ca);
  t.is(forged.status, 401, 'a token that does not verify is refused by the node it reached, never passed on');
  const elsewhere = await initializeThrough(n1.url, await issuer.sign({ org: TENANT, sub: 'alice', aud: 'another-service' }), etcd.certs.ca);
  t.is(elsewhere.status, 401, 'nor one issued for another resource');
});
