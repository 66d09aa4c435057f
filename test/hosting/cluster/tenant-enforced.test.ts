/**
 * `toolcell tenant add|revoke --etcd` return once every serving node
 * enforces the change (hosting/cluster/tenants-applied.ts), not when etcd
 * took it: a new key then opens a session through any node at once, a
 * revoked one is refused by all. A node frozen (SIGSTOP) while the change
 * is made is waited for, and named when --wait-seconds runs out. Real etcd,
 * two real nodes, the MCP SDK client.
 */
import anyTest, { type TestFn } from 'ava';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli.js';
import { initializeThrough, startClusterNode, type ClusterNode } from '../../helpers/cluster-node.js';
import { eventually, requireDocker } from '../../helpers/docker.js';
import { requireEtcd, startEtcd, type TestEtcd } from '../../helpers/etcd.js';

const test = requireEtcd(await requireDocker(anyTest as TestFn, 'tenant changes enforced'), 'tenant changes enforced');

const TENANT = 'initech';

/** Whether `key` opens a session through `node` now (forwarded when the tenant lives elsewhere): 'opened', or the status and answer. */
async function opens(node: ClusterNode, key: string, etcd: TestEtcd): Promise<string> {
  const answer = await initializeThrough(node.url, key, etcd.certs.ca);
  const text = await answer.text();
  return answer.status === 200 && answer.headers.get('mcp-session-id') !== null ? 'opened' : `${answer.status} ${text}`;
}

test.serial('add and revoke --etcd wait for every serving node: a frozen node is waited for, or named when the wait runs out', async (t) => {
  const etcd = await startEtcd(t);
  const n1 = await startClusterNode(t, etcd, 'n1', { tenants: [TENANT] });
  const n2 = await startClusterNode(t, etcd, 'n2', { tenants: [TENANT] });

  // n2 frozen: etcd has the key and n1 enforces it, but the command waits for n2.
  n2.signal('SIGSTOP');
  t.teardown(() => n2.signal('SIGCONT'));
  let n2Frozen = true;
  let madeAt: (() => void) | undefined;
  const made = new Promise<void>((resolve) => (madeAt = resolve));
  const adding = runCli(['tenant', 'add', TENANT, '--node', 'n1', '--limit', 'diskBytes=32m', ...etcd.flags], {
    onStderr: (text) => {
      if (/created tenant initech/.test(text)) madeAt!();
    },
  }).then((result) => ({ ...result, whileFrozen: n2Frozen }));
  await made;
  t.true(await eventually(async () => n1.tenants()[TENANT] !== undefined, 30_000), 'n1 took the change');
  // A second for a command that did not wait to have exited (it would print and exit in milliseconds).
  await new Promise((resolve) => setTimeout(resolve, 1000));
  n2Frozen = false;
  n2.signal('SIGCONT');
  const added = await adding;
  t.is(added.code, 0, added.stderr);
  t.false(added.whileFrozen, 'the command returned while n2 had not taken the key');
  t.regex(added.stderr, /in effect on nodes n1, n2$/m);
  const key = added.stdout.trim();
  t.is(await opens(n2, key, etcd), 'opened', 'through n2 (checked there, then on n1) at once');
  t.is(await opens(n1, key, etcd), 'opened');

  // Revoked while n2 is frozen, with a short wait: n2 is named as behind, the exit is 0 (the change is made).
  n2.signal('SIGSTOP');
  const revoked = await runCli(['tenant', 'revoke', TENANT, '--wait-seconds', '1', ...etcd.flags]);
  t.is(revoked.code, 0, revoked.stderr);
  t.regex(revoked.stderr, /in effect on node n1$/m);
  t.regex(revoked.stderr, /not yet in effect on node n2 after 1 s/);
  t.regex(await opens(n1, key, etcd), /Invalid bearer token/, 'n1 refuses it once the command returns');
  n2.signal('SIGCONT');
  t.true(await eventually(async () => /Invalid bearer token/.test(await opens(n2, key, etcd)), 30_000), 'n2 refuses it once it runs again');

  // Unfrozen: the next change is in effect on both when the command returns.
  const second = await runCli(['tenant', 'add', TENANT, ...etcd.flags]);
  t.is(second.code, 0, second.stderr);
  t.regex(second.stderr, /in effect on nodes n1, n2$/m);
  t.is(await opens(n2, second.stdout.trim(), etcd), 'opened');
});

test('--wait-seconds is for a cluster: with a tenants file it is refused and nothing is written', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-wait-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'tenants.json');
  for (const command of [
    ['add', TENANT],
    ['remove', TENANT],
  ]) {
    const refused = await runCli(['tenant', ...command, '--tenants', file, '--wait-seconds', '5']);
    t.is(refused.code, 2, refused.stderr);
    t.regex(refused.stderr, /--wait-seconds needs --etcd/);
  }
  const bad = await runCli(['tenant', 'add', TENANT, '--tenants', file, '--wait-seconds', 'soon']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /must be a whole number of seconds/);
  t.false(existsSync(file), 'no tenants file was written');
});
