/**
 * `toolcell tenant set|remove --etcd` against a real etcd and a real node's
 * server: a changed limit reaches the server's mirror and its live
 * sessions as on one host; a removed tenant's sessions close on its node,
 * which deletes its workspace (also when it was down at the time: it does
 * so once back, from the record), and its name can then be added afresh.
 */
import anyTest, { type TestFn } from 'ava';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { connectEtcd } from '../../../src/hosting/cluster/etcd-connection.js';
import { readClusterTenants } from '../../../src/hosting/cluster/cluster-tenants.js';
import { tenantSlug } from '../../../src/hosting/tenants/disk/tenant-slug.js';
import { runCli } from '../../helpers/cli.js';
import { connectOverTls, startClusterNode, type ClusterNode } from '../../helpers/cluster-node.js';
import { eventually, requireDocker } from '../../helpers/docker.js';
import { requireEtcd, startEtcd, type TestEtcd } from '../../helpers/etcd.js';
import { call } from '../../helpers/hosting.js';

const test = requireEtcd(await requireDocker(anyTest as TestFn, 'tenant set/remove --etcd'), 'tenant set/remove --etcd');

const TENANT = 'globex';

function imageOn(node: ClusterNode): string {
  return join(realpathSync(join(node.dataDir, 'hosting')), 'disk-images', `${tenantSlug(TENANT)}.ext4`);
}

async function add(etcd: TestEtcd, node: ClusterNode): Promise<string> {
  const added = await runCli(['tenant', 'add', TENANT, '--node', node.name, '--limit', 'diskBytes=32m', ...etcd.flags]);
  if (added.code !== 0) throw new Error(`tenant add: ${added.stderr}`);
  // The command returns once the node enforces the new key: nothing to wait for here.
  if (!new RegExp(`in effect on node ${node.name}$`, 'm').test(added.stderr)) throw new Error(`tenant add did not wait for node ${node.name}: ${added.stderr}`);
  return added.stdout.trim();
}

async function removals(etcd: TestEtcd): Promise<Record<string, unknown>> {
  const client = connectEtcd(etcd.connection);
  try {
    return (await readClusterTenants(client)).doc.removals;
  } finally {
    client.close();
  }
}

test.serial('tenant set --etcd reaches the node: the new limit holds for its next session', async (t) => {
  const etcd = await startEtcd(t);
  const n1 = await startClusterNode(t, etcd, 'n1', { tenants: [TENANT] });
  const key = await add(etcd, n1);
  const set = await runCli(['tenant', 'set', TENANT, '--limit', 'sessions=1', ...etcd.flags]);
  t.is(set.code, 0, set.stderr);
  t.regex(set.stderr, /changed globex \(--limit\) in the cluster/);
  t.regex(set.stderr, /in effect on node n1$/m);
  t.is(n1.tenants()[TENANT]?.limits?.['sessions'], 1, "the node's tenants file has it");
  const first = await connectOverTls(n1.url, key, etcd.certs.ca);
  t.teardown(() => first.close());
  const second = await connectOverTls(n1.url, key, etcd.certs.ca).then(
    async (connection) => {
      await connection.close();
      return 'opened';
    },
    (error: unknown) => String(error),
  );
  t.regex(second, /quota_exceeded: the limit sessions \(1 at once\)/);

  const unknown = await runCli(['tenant', 'set', 'nobody', '--limit', 'sessions=2', ...etcd.flags]);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /no tenant "nobody" in the cluster/);
  const local = await runCli(['tenant', 'set', TENANT, '--workspace', '/tmp/x', ...etcd.flags]);
  t.is(local.code, 2);
  t.regex(local.stderr, /--workspace names a path on one machine/);
  const nothing = await runCli(['tenant', 'set', TENANT, ...etcd.flags]);
  t.is(nothing.code, 2);
  t.regex(nothing.stderr, /nothing to change/);
});

test.serial('tenant remove --etcd closes its sessions and its node deletes its workspace, also after being down; the name is then new', async (t) => {
  const etcd = await startEtcd(t);
  const n1 = await startClusterNode(t, etcd, 'n1', { tenants: [TENANT] });
  let key = await add(etcd, n1);
  const live = await connectOverTls(n1.url, key, etcd.certs.ca);
  t.teardown(() => live.close());
  t.is((await call(live.client, 'write_file', { file_path: 'old.txt', content: 'of the first globex\n' })).errorType, undefined);
  t.true(existsSync(imageOn(n1)));
  const listed = async () => JSON.parse((await runCli(['hosting', 'sessions', '--json', '--tenant', TENANT, ...etcd.flags])).stdout || '[]') as unknown[];
  t.true(await eventually(async () => (await listed()).length === 1, 30_000), 'its session is listed before');

  const removed = await runCli(['tenant', 'remove', TENANT, ...etcd.flags]);
  t.is(removed.code, 0, removed.stderr);
  t.regex(removed.stderr, /node n1 closes its sessions and deletes its workspace/);
  t.regex(removed.stderr, /in effect on node n1$/m);
  t.true(await eventually(async () => !existsSync(imageOn(n1)) && Object.keys(await removals(etcd)).length === 0, 30_000));
  const after = await call(live.client, 'read_file', { file_path: 'old.txt' }).then(
    () => 'answered',
    (error: unknown) => String(error),
  );
  t.regex(after, /Invalid bearer token|Session not found/, 'its key is refused');
  t.true(await eventually(async () => (await listed()).length === 0, 30_000), 'and its live session was closed on its node');

  // Down when the tenant is removed: its files wait for it, and the name cannot be reused meanwhile.
  key = await add(etcd, n1);
  const again = await connectOverTls(n1.url, key, etcd.certs.ca);
  t.is((await call(again.client, 'write_file', { file_path: 'old.txt', content: 'of the second globex\n' })).errorType, undefined);
  await again.close();
  await n1.stop('SIGKILL');
  // Killed, it is still registered until its lease ends (about 10 s): the command names it as behind and returns.
  const whileDown = await runCli(['tenant', 'remove', TENANT, '--wait-seconds', '1', ...etcd.flags]);
  t.is(whileDown.code, 0, whileDown.stderr);
  t.regex(whileDown.stderr, /not yet in effect on node n1 after 1 s: each takes it from etcd as soon as it can \(the change is made\)/);
  t.deepEqual(Object.keys(await removals(etcd)), [TENANT]);
  const early = await runCli(['tenant', 'add', TENANT, ...etcd.flags]);
  t.is(early.code, 2);
  t.regex(early.stderr, /node n1 has not deleted its workspace yet/);
  t.true(existsSync(imageOn(n1)));
  await n1.start();
  t.true(await eventually(async () => !existsSync(imageOn(n1)) && Object.keys(await removals(etcd)).length === 0, 60_000), n1.stderr());

  key = await add(etcd, n1);
  const fresh = await connectOverTls(n1.url, key, etcd.certs.ca);
  t.teardown(() => fresh.close());
  t.regex(
    (await call(fresh.client, 'read_file', { file_path: 'old.txt' })).errorType ?? '',
    /file_not_found/,
    'a tenant added again under the name finds nothing of the old one',
  );
});
