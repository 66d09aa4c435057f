/**
 * Tenants' CPU weights by recent use (admission/tenant-cpu-weights.ts): a
 * tenant that keeps the sandboxes' CPUs busy weighs less in the kernel
 * than a quiet one, so the quiet one's calls are not halved by the busy
 * one's spin; weights go back to the kernel's default once a tenant is
 * quiet, gone, or the server stops. Real cgroups and, for the server, a
 * real engine; what it buys in latency is bench/hosting's figure.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { hostCpuGroupControl, type CpuGroupControl } from '../../src/backends/docker/cpu-group-weight.js';
import { TenantCpuWeights, BUSIEST_TENANT_WEIGHT } from '../../src/hosting/admission/tenant-cpu-weights.js';
import { tenantSlug } from '../../src/hosting/tenants/disk/tenant-slug.js';
import { makeCpuGroup } from '../helpers/cpu-group.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, startHosting } from '../helpers/hosting.js';

const test = anyTest as TestFn;
const dockerTest = await requireDocker(anyTest as TestFn, 'hosting/tenant-cpu-weights');

async function control(): Promise<CpuGroupControl> {
  const found = await hostCpuGroupControl();
  if (typeof found === 'string') throw new Error(found);
  return found;
}

/** A process spinning on one CPU until the test ends. */
async function spinner(t: ExecutionContext) {
  const child = spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' });
  await once(child, 'spawn');
  t.teardown(() => void child.kill('SIGKILL'));
  return child;
}

test('a group that kept the CPUs busy weighs less than a quiet one, in the kernel; quiet again, it gets the default back', async (t) => {
  const suffix = randomUUID().slice(0, 8);
  const busy = await makeCpuGroup(t, `weights-busy-${suffix}`);
  const quiet = await makeCpuGroup(t, `weights-quiet-${suffix}`);
  const spin = await spinner(t);
  await busy.add(spin.pid!);
  const weights = new TenantCpuWeights({
    control: await control(),
    cpus: 1,
    tenants: () => [
      ['busy', busy.name],
      ['quiet', quiet.name],
    ],
    intervalMs: 50,
    halfLifeMs: 250,
  });
  t.teardown(() => weights.close());
  const weightOf = (tenant: string) => weights.weights().find((weight) => weight.tenant === tenant)?.weight;

  t.true(await eventually(async () => (weightOf('busy') ?? 1) < 0.7, 20_000), JSON.stringify(weights.weights()));
  const busyWeight = await busy.kernelWeight();
  t.true(busyWeight < 0.7 && busyWeight >= BUSIEST_TENANT_WEIGHT - 0.01, `the kernel's weight of the busy group: ${busyWeight}`);
  t.true(Math.abs(busyWeight - weightOf('busy')!) < 0.01, 'the kernel has the weight the server shows');
  t.is(weightOf('quiet'), 1);
  t.is(await quiet.kernelWeight(), 1, 'a quiet group keeps the default');

  spin.kill('SIGKILL');
  t.true(await eventually(async () => weightOf('busy') === 1, 20_000), JSON.stringify(weights.weights()));
  t.is(await busy.kernelWeight(), 1, 'quiet again, the busy group has the default back');
});

test('a tenant no longer listed, and every tenant at close, gets the default weight back', async (t) => {
  const suffix = randomUUID().slice(0, 8);
  const first = await makeCpuGroup(t, `weights-first-${suffix}`);
  const second = await makeCpuGroup(t, `weights-second-${suffix}`);
  for (const group of [first, second]) await group.add((await spinner(t)).pid!);
  let listed: Array<readonly [string, string]> = [
    ['first', first.name],
    ['second', second.name],
  ];
  const weights = new TenantCpuWeights({ control: await control(), cpus: 1, tenants: () => listed, intervalMs: 50, halfLifeMs: 250 });
  t.teardown(() => weights.close());
  t.true(await eventually(async () => (await first.kernelWeight()) < 0.8 && (await second.kernelWeight()) < 0.8, 20_000));

  listed = [['second', second.name]];
  t.true(await eventually(async () => (await first.kernelWeight()) === 1, 20_000), 'a tenant no longer listed (its sessions closed) is put back');
  t.true((await second.kernelWeight()) < 0.8);
  await weights.close();
  t.is(await second.kernelWeight(), 1, 'close puts every group back');
});

test('a group without a folder yet (no container so far) is skipped, not an error', async (t) => {
  const logged: string[] = [];
  const weights = new TenantCpuWeights({
    control: await control(),
    cpus: 1,
    tenants: () => [['nobody', `weights-none-${randomUUID().slice(0, 8)}`]],
    onLog: (line) => logged.push(line),
  });
  await weights.tick();
  await weights.tick();
  await weights.close();
  t.deepEqual(weights.weights(), []);
  t.deepEqual(logged, []);
});

dockerTest.serial(
  "on a hosting server, a tenant spinning in its sandbox weighs less than another tenant's session, and the default comes back when its session closes",
  async (t) => {
    const dir = await hostingFolder(t, 'toolcell-cpu-weights-');
    const file = join(dir, 'tenants.json');
    // Names of their own: the tenant's CPU group is named for it, and other tests' servers must not weigh it.
    const suffix = randomUUID().slice(0, 6);
    const [busy, quiet] = [`spin-${suffix}`, `calm-${suffix}`];
    const busyKey = await addTenant(file, busy);
    const quietKey = await addTenant(file, quiet);
    const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
    t.teardown(() => hosting.close());
    const busySession = await connectAs(hosting.server.url, busyKey);
    const quietSession = await connectAs(hosting.server.url, quietKey);
    t.teardown(() => Promise.all([busySession.close(), quietSession.close()]));
    await call(quietSession.client, 'run_shell_command', { command: 'echo started' });
    const weightOf = (tenant: string) => hosting.server.tenantCpuWeights().find((weight) => weight.tenant === tenant)?.weight;
    const kernel = await control();

    const spinning = call(busySession.client, 'run_shell_command', { command: 'timeout 30 sh -c "while :; do :; done"; echo spun' });
    t.true(await eventually(async () => (weightOf(busy) ?? 1) < 0.8, 25_000), JSON.stringify(hosting.server.tenantCpuWeights()));
    // The quiet tenant's echo and container start count a little.
    t.true((weightOf(quiet) ?? 1) > 0.9, `the quiet tenant keeps about the default: ${weightOf(quiet)}`);
    t.true((await kernel.usageSeconds(tenantSlug(busy)))! > 0, "the busy tenant's group is the one its containers are in");
    const shares = await readFile(join('/sys/fs/cgroup/cpu', `toolcell-${tenantSlug(busy)}`, 'cpu.shares'), 'utf8').catch(() => undefined);
    if (shares !== undefined) t.true(Number(shares) < 0.8 * 1024, `the kernel has the busy tenant's weight: cpu.shares ${shares.trim()}`);

    await busySession.close();
    await spinning.catch(() => {});
    t.true(await eventually(async () => weightOf(busy) === undefined, 25_000), 'its sessions closed, the tenant is no longer weighed');
    if (shares !== undefined)
      t.is(
        (await readFile(join('/sys/fs/cgroup/cpu', `toolcell-${tenantSlug(busy)}`, 'cpu.shares'), 'utf8')).trim(),
        '1024',
        'and its group has the default back',
      );
    await hosting.close();
    t.deepEqual(hosting.server.tenantCpuWeights(), [], 'a stopped server weighs nobody');
  },
);
