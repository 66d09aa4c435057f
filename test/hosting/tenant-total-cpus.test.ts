/**
 * `totalCpus`: all of a tenant's session containers together use at most
 * that many CPUs, on a real hosting server and a real engine: a tenant
 * opening sessions and spinning in each (an attacker's way to take the
 * host's every core) gets its total, throttled by the kernel, while each
 * container keeps its own `cpus`. Read from the host's cgroups.
 */
import anyTest, { type TestFn } from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { capCpuGroup } from '../../src/backends/docker/cpu-group-quota.js';
import { processCgroup } from '../../src/backends/docker/process-cgroup.js';
import { resolveLimits } from '../../src/hosting/admission/limits.js';
import { tenantSlug } from '../../src/hosting/tenants/disk/tenant-slug.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, startHosting, type Connection } from '../helpers/hosting.js';

const test = await requireDocker(anyTest as TestFn, 'hosting/total-cpus');

/** The cpu cgroup folder (v1 or v2) of the session's container, from its first process on this host. */
async function cpuGroupOf(connection: Connection): Promise<{ dir: string; v1: boolean }> {
  const hostname = await call(connection.client, 'run_shell_command', { command: 'echo "HOST=$(hostname)"' });
  const id = /HOST=([0-9a-f]{12})/.exec(hostname.text)?.[1];
  if (id === undefined) throw new Error(`no container id in ${hostname.text}`);
  const cgroup = await processCgroup((await createEngineClient().getContainer(id).inspect()).State.Pid, 'cpu');
  if (cgroup === undefined) throw new Error(`container ${id} has no cpu cgroup`);
  return { dir: join(cgroup.v1 ? '/sys/fs/cgroup/cpu' : '/sys/fs/cgroup', cgroup.path), v1: cgroup.v1 };
}

/** The group's quota in CPUs, and how often it was throttled. */
async function groupQuota(group: { dir: string; v1: boolean }): Promise<{ cpus: number; throttled: number }> {
  const stat = await readFile(join(group.dir, 'cpu.stat'), 'utf8');
  const throttled = Number(/nr_throttled (\d+)/.exec(stat)?.[1] ?? NaN);
  if (group.v1) {
    const [quota, period] = await Promise.all(
      ['cpu.cfs_quota_us', 'cpu.cfs_period_us'].map(async (file) => Number(await readFile(join(group.dir, file), 'utf8'))),
    );
    return { cpus: quota! / period!, throttled };
  }
  const [quota, period] = (await readFile(join(group.dir, 'cpu.max'), 'utf8')).trim().split(' ');
  return { cpus: quota === 'max' ? Infinity : Number(quota) / Number(period), throttled };
}

test('a tenant spinning in every session gets its totalCpus together, each container keeping its own cpus', async (t) => {
  const dir = await hostingFolder(t, 'toolcell-total-cpus-');
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'spinner', ['--limit', 'cpus=0.4', '--limit', 'totalCpus=0.5', '--limit', 'sessions=3']);
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const sessions = await Promise.all([0, 1, 2].map(() => connectAs(hosting.server.url, key)));
  t.teardown(() => Promise.all(sessions.map((session) => session.close())));

  const containers = await Promise.all(sessions.map(cpuGroupOf));
  const group = { dir: join(containers[0]!.dir, '..'), v1: containers[0]!.v1 };
  t.is(group.dir, join(containers[0]!.v1 ? '/sys/fs/cgroup/cpu' : '/sys/fs/cgroup', `toolcell-${tenantSlug('spinner')}`));
  for (const container of containers) {
    t.is(join(container.dir, '..'), group.dir, "every session's container is in the tenant's group");
    t.is((await groupQuota(container)).cpus, 0.4, 'each container keeps its own cpus');
  }
  const before = await groupQuota(group);
  t.is(before.cpus, 0.5, "the tenant's group is capped at totalCpus");

  // Three spinners for two seconds would take 1.2 CPUs; the kernel throttles the group at 0.5 instead.
  await Promise.all(sessions.map((session) => call(session.client, 'run_shell_command', { command: 'timeout 2 sh -c "while :; do :; done"; echo spun' })));
  t.true((await groupQuota(group)).throttled > before.throttled, 'the group was throttled at its total');
});

test('a container never gets more CPUs than its tenant has in total', async (t) => {
  const dir = await hostingFolder(t, 'toolcell-total-cpus-');
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'narrow', ['--limit', 'cpus=2', '--limit', 'totalCpus=0.25']);
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const session = await connectAs(hosting.server.url, key);
  t.teardown(() => session.close());
  const container = await cpuGroupOf(session);
  t.is((await groupQuota(container)).cpus, 0.25);
  t.is((await groupQuota({ dir: join(container.dir, '..'), v1: container.v1 })).cpus, 0.25);
});

test('the cap is written only to the group named for it, never to another cgroup', async (t) => {
  // This test's own process is in no toolcell group: nothing is written, and the reason says so.
  const problem = await capCpuGroup({ pid: process.pid, group: 'nobody-0000', cpus: 0.5 });
  t.regex(problem ?? '', /not in \/toolcell-nobody-0000|no cpu cgroup/);
});

test('totalCpus defaults to the tenant’s cpus, and is bounded as cpus is', (t) => {
  t.is(resolveLimits(undefined, undefined).totalCpus, 1);
  t.is(resolveLimits(undefined, { cpus: 2 }).totalCpus, 2, 'one sandbox’s worth unless said');
  t.is(resolveLimits({ totalCpus: 3 }, { cpus: 2 }).totalCpus, 3);
  t.is(resolveLimits(undefined, { cpus: 2, totalCpus: 0.5 }).totalCpus, 0.5);
});
