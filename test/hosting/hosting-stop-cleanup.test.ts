/**
 * What a stopped or crashed `toolcell serve --tenants` leaves on the host,
 * with the real CLI, real Docker, real loop mounts and the SDK client:
 * - SIGTERM with sessions still open unmounts every tenant's workspace, so
 *   the data directory can be moved and removed;
 * - after kill -9, the next server removes the dead one's egress networks
 *   and firewall rules (not only its containers), and when it stops it
 *   unmounts the workspaces the dead one mounted, also of tenants that never
 *   came back.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { LABELS } from '../../src/backends/docker/labels.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, toolcellContainersUnder } from '../helpers/hosting.js';
import { releaseLeftDisks, startCliServer } from '../helpers/hosting-cli.js';
import { canMount, loopDevicesOf } from '../helpers/tenant-disks.js';

const test = (await requireDocker(anyTest, 'hosting/stop-cleanup')).serial;

/** Mount points at or under `dir`, from this process's mount table. */
async function mountsUnder(dir: string): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  return table
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .map((field) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}

/** Toolcell egress networks created by process `pid`. */
async function egressNetworksOf(pid: number): Promise<string[]> {
  const networks = await createEngineClient().listNetworks({ filters: { label: [`${LABELS.ownerPid}=${pid}`] } });
  return networks.map((network) => network.Name).filter((name) => name.startsWith('toolcell-egress-'));
}

function firewallRules(network: string): string[] {
  const bridge = `tc${network.slice('toolcell-egress-'.length)}`;
  return ['iptables', 'ip6tables'].flatMap((tool) =>
    execFileSync(tool, ['-w', '5', '-S', 'INPUT'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(`toolcell egress ${bridge}`)),
  );
}

/** Opens a session as `key`, runs a command in its container (so its workspace is mounted and its network made), and leaves it open. */
async function busySession(t: ExecutionContext, url: string, key: string): Promise<void> {
  const session = await connectAs(url, key);
  const ran = await call(session.client, 'run_shell_command', { command: 'echo here > here.txt && echo ok' });
  t.is(ran.errorType, undefined, ran.text);
  // The client goes without a DELETE: the server still holds the session when it stops.
  await session.client.close();
}

async function setUp(t: ExecutionContext) {
  const dir = await hostingFolder(t, 'toolcell-stop-cleanup-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const keys = {
    // example.com is never reached: the list only gives the tenant an egress network and proxy of its own.
    netted: await addTenant(file, 'netted', ['--network-allow', 'example.com']),
    plain: await addTenant(file, 'plain'),
  };
  releaseLeftDisks(t, dataDir, Object.keys(keys));
  return { dir, dataDir, keys, args: ['--tenants', file, '--data-dir', dataDir] };
}

/** The data directory can be moved, then removed: nothing holds it. */
async function movableAndRemovable(t: ExecutionContext, dir: string, dataDir: string): Promise<void> {
  const moved = join(dir, 'moved');
  await rename(dataDir, moved);
  await rm(moved, { recursive: true });
  t.pass();
}

test('SIGTERM with sessions open unmounts every tenant workspace: the data dir can be moved and removed', async (t) => {
  t.timeout(300_000);
  if (!canMount(t)) return;
  const { dir, dataDir, keys, args } = await setUp(t);
  const server = await startCliServer(t, args);
  for (const key of Object.values(keys)) await busySession(t, server.url, key);
  t.is((await mountsUnder(dataDir)).length, 2, 'each tenant’s workspace is mounted while it serves');
  const image = join(dataDir, 'disk-images');
  const { code } = await server.stop('SIGTERM');
  t.is(code, 0, server.stderr());
  t.deepEqual(await mountsUnder(dataDir), []);
  for (const tenantImage of execFileSync('ls', [image], { encoding: 'utf8' }).split('\n').filter(Boolean))
    t.deepEqual(await loopDevicesOf(join(image, tenantImage)), [], `${tenantImage} is detached`);
  await movableAndRemovable(t, dir, dataDir);
});

test('after kill -9, the next server removes the dead one’s egress networks and firewall rules, and on SIGTERM unmounts what the dead one mounted', async (t) => {
  t.timeout(400_000);
  const { dir, dataDir, keys, args } = await setUp(t);
  const first = await startCliServer(t, args);
  for (const key of Object.values(keys)) await busySession(t, first.url, key);
  const networks = await egressNetworksOf(first.pid);
  t.is(networks.length, 1, 'the tenant with an allow list has an egress network of its own');
  t.true(firewallRules(networks[0]!).length > 0, 'with its host firewall rules');
  const mounted = await mountsUnder(dataDir);
  t.like(await first.stop('SIGKILL'), { signal: 'SIGKILL' });
  t.deepEqual(await egressNetworksOf(first.pid), networks, 'the killed server’s network is still there');

  const second = await startCliServer(t, args);
  t.deepEqual(await egressNetworksOf(first.pid), [], 'removed at start-up');
  t.deepEqual(firewallRules(networks[0]!), [], 'with its firewall rules');
  t.true(second.stderr().includes('removed 1 egress network(s) and their firewall rules left by a server that is gone'), second.stderr());
  // Only one tenant comes back: the other's workspace stays as the dead server left it until the stop.
  await busySession(t, second.url, keys.plain);
  const { code } = await second.stop('SIGTERM');
  t.is(code, 0, second.stderr());
  t.deepEqual(await toolcellContainersUnder(dataDir), []);
  if (process.getuid?.() !== 0) return;
  t.is(mounted.length, 2, 'both workspaces were mounted by the killed server');
  t.deepEqual(await mountsUnder(dataDir), [], second.stderr());
  t.regex(second.stderr(), /unmounted 1 tenant workspace\(s\) a server that is gone had left mounted/);
  await movableAndRemovable(t, dir, dataDir);
});
