/**
 * One shell service (one shell thread, one Docker backend) for every tenant:
 * each session's container still gets its own tenant's memory, CPUs and
 * pids, read back with `docker inspect`; a tenant whose limits change gets
 * new sessions with the new limits while its old ones keep theirs; and the
 * TenantResources seam for a tenant with a shell service of its own.
 */
import anyTest, { type TestFn } from 'ava';
import { join } from 'node:path';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { LABELS } from '../../src/backends/docker/labels.js';
import { tenantSlug } from '../../src/hosting/tenants/disk/tenant-slug.js';
import { DEFAULT_TENANT_LIMITS } from '../../src/hosting/admission/limits.js';
import { TenantResources } from '../../src/hosting/tenants/tenant-resources.js';
import { TENANT_UID_FIRST } from '../../src/hosting/tenants/tenant-uid.js';
import { folderWorkspace } from '../../src/hosting/tenants/tenant-workspace.js';
import { readTenantsFile, writeTenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { ShellService } from '../../src/shell/shell-service.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, startHosting, type Connection, type Hosting } from '../helpers/hosting.js';

interface Context {
  hosting: Hosting;
  file: string;
  dir: string;
  keys: Record<string, string>;
}
const test = (await requireDocker(anyTest as TestFn<Context>, 'hosting/shared-shell')).serial;

const MiB = 1024 * 1024;
const TENANTS: Record<string, string[]> = {
  small: ['--limit', 'memory=96m', '--limit', 'pids=48', '--limit', 'cpus=0.25'],
  large: ['--limit', 'memory=320m', '--limit', 'pids=300', '--limit', 'cpus=1.5'],
  moving: ['--limit', 'memory=128m', '--limit', 'pids=64', '--limit', 'cpus=0.5'],
};

anyTest.before(async (t) => {
  const context = t.context as Context;
  context.dir = await hostingFolder({ teardown: () => {} }, 'toolcell-hosting-shared-');
  context.file = join(context.dir, 'tenants.json');
  context.keys = {};
  for (const [name, limits] of Object.entries(TENANTS)) context.keys[name] = await addTenant(context.file, name, limits);
  context.hosting = await startHosting({ tenantsFile: context.file, dataDir: join(context.dir, 'data') });
});

anyTest.after.always(async (t) => {
  await (t.context as Partial<Context>).hosting?.close();
});

interface Inspected {
  limits: { memory: number; cpus: number; pids: number };
  backend: string;
  cgroupParent: string;
}

/** The session container's limits and backend label, from the engine (the container's hostname is its short id). */
async function inspectContainer(connection: Connection): Promise<Inspected> {
  const hostname = await call(connection.client, 'run_shell_command', { command: 'echo "HOST=$(hostname)"' });
  const id = /HOST=([0-9a-f]{12})/.exec(hostname.text)?.[1];
  if (id === undefined) throw new Error(`no container id in ${hostname.text}`);
  const info = await createEngineClient().getContainer(id).inspect();
  return {
    limits: { memory: info.HostConfig.Memory ?? 0, cpus: (info.HostConfig.NanoCpus ?? 0) / 1e9, pids: info.HostConfig.PidsLimit ?? 0 },
    backend: info.Config.Labels[LABELS.backend] ?? '',
    cgroupParent: info.HostConfig.CgroupParent ?? '',
  };
}

test("tenants share one Docker backend, and each container has its own tenant's limits", async (t) => {
  const { hosting, keys } = t.context;
  const [small, large] = await Promise.all([connectAs(hosting.server.url, keys['small']!), connectAs(hosting.server.url, keys['large']!)]);
  t.teardown(() => Promise.all([small.close(), large.close()]));
  const [a, b] = await Promise.all([inspectContainer(small), inspectContainer(large)]);
  t.deepEqual(a.limits, { memory: 96 * MiB, cpus: 0.25, pids: 48 });
  t.deepEqual(b.limits, { memory: 320 * MiB, cpus: 1.5, pids: 300 });
  t.truthy(a.backend);
  t.is(a.backend, b.backend, 'one backend (one shell thread) serves both tenants');
  // Each tenant's containers share one parent cgroup: one CPU share per tenant, however many sessions it runs.
  t.is(a.cgroupParent, `/toolcell-${tenantSlug('small')}`);
  t.is(b.cgroupParent, `/toolcell-${tenantSlug('large')}`);
  const second = await connectAs(hosting.server.url, keys['small']!);
  t.teardown(() => second.close());
  t.is((await inspectContainer(second)).cgroupParent, a.cgroupParent);
});

test('a tenant whose limits change gets new sessions with the new limits; its open session keeps the old', async (t) => {
  const { hosting, keys, file } = t.context;
  const before = await connectAs(hosting.server.url, keys['moving']!);
  t.teardown(() => before.close());
  t.deepEqual((await inspectContainer(before)).limits, { memory: 128 * MiB, cpus: 0.5, pids: 64 });

  const content = (await readTenantsFile(file))!;
  content.tenants['moving']!.limits = { memory: 200 * MiB, pids: 100, cpus: 0.75 };
  await writeTenantsFile(file, content);
  t.true(await eventually(async () => hosting.store.tenant('moving')?.limits.pids === 100));

  const after = await connectAs(hosting.server.url, keys['moving']!);
  t.teardown(() => after.close());
  t.deepEqual((await inspectContainer(after)).limits, { memory: 200 * MiB, cpus: 0.75, pids: 100 });
  t.deepEqual((await inspectContainer(before)).limits, { memory: 128 * MiB, cpus: 0.5, pids: 64 });
  // Both sessions still work, on the tenant's one workspace.
  await call(before.client, 'run_shell_command', { command: 'echo from-before > shared.txt' });
  t.regex((await call(after.client, 'run_shell_command', { command: 'cat shared.txt' })).text, /from-before/);
});

test('a tenant handed a shell service of its own opens its sessions there, and closing its resources closes that service', async (t) => {
  const { hosting, dir } = t.context;
  const own = await ShellService.create({ docker: { warmPool: 0, removeLeftovers: false } });
  t.teardown(() => own.close());
  const resources = await TenantResources.create({
    tenant: 'dedicated',
    uid: TENANT_UID_FIRST + 999,
    limits: { ...DEFAULT_TENANT_LIMITS, memory: 80 * MiB, pids: 40 },
    runtime: hosting.runtime,
    prepareWorkspace: folderWorkspace({ dataDir: join(dir, 'dedicated'), workspaceOf: () => undefined }),
    shell: own,
    ownsShell: true,
  });
  t.teardown(() => resources.close());
  const session = await resources.createSession('seam-1');
  const shell = session.registry.get('run_shell_command')!;
  t.truthy(shell);
  await session.close();
  await resources.close();
  await t.throwsAsync(own.openSession({ sandbox: 'docker', workspaceRoot: resources.workspace.roots[0]! }), { message: /closed/ });
});
