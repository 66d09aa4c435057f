/**
 * One hosting server, tenants on different runtimes at the same time: the
 * tenants file's `runtime` (set with `tenant add --runtime`) puts each
 * tenant's sessions on its runtime, a tenant without one gets the
 * operator's, the admin listing names each session's runtime, and a tenant
 * whose runtime the engine lacks is refused at session open in one line.
 */
import anyTest, { type TestFn } from 'ava';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, startHosting, type Hosting } from '../helpers/hosting.js';
import { requireGvisor, TEST_RUNTIME } from '../helpers/test-runtime.js';

type Context = { hosting: Hosting; keys: Record<string, string> };
const docker = await requireDocker(anyTest as TestFn<Context>, 'hosting/runtime');
const test = (await requireGvisor(docker, 'hosting/runtime')).serial;

docker.before(async (t) => {
  const dir = await hostingFolder({ teardown: () => {} }, 'toolcell-hosting-runtime-');
  const file = join(dir, 'tenants.json');
  t.context.keys = {
    alpha: await addTenant(file, 'alpha', ['--runtime', 'runsc']),
    beta: await addTenant(file, 'beta', ['--runtime', 'runc']),
    gamma: await addTenant(file, 'gamma'),
    delta: await addTenant(file, 'delta', ['--runtime', 'toolcell-no-such-runtime']),
  };
  t.context.hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
});

docker.after.always(async (t) => {
  await t.context.hosting?.close();
});

test('tenant alpha runs on gVisor while tenant beta runs on runc, at the same time; the session list names each runtime', async (t) => {
  const { hosting, keys } = t.context;
  const [alpha, beta, gamma] = await Promise.all([
    connectAs(hosting.server.url, keys['alpha']!),
    connectAs(hosting.server.url, keys['beta']!),
    connectAs(hosting.server.url, keys['gamma']!),
  ]);
  t.teardown(() => Promise.all([alpha.close(), beta.close(), gamma.close()]));
  const probe = { command: 'dmesg 2>&1 | head -1; uname -r; echo "uid=$(id -u)"' };
  const [inAlpha, inBeta] = await Promise.all([call(alpha.client, 'run_shell_command', probe), call(beta.client, 'run_shell_command', probe)]);
  t.regex(inAlpha.text, /Starting gVisor/, inAlpha.text);
  t.notRegex(inBeta.text, /Starting gVisor/, inBeta.text);
  // Each tenant's commands run as its own uid (tenant-uid.ts), on either runtime.
  const uids = [inAlpha.text, inBeta.text].map((text) => Number(/uid=(\d+)/.exec(text)?.[1]));
  t.true(
    uids.every((uid) => uid >= 1_900_000_000),
    `tenant uids: ${uids.join(', ')}`,
  );
  t.not(uids[0], uids[1]);
  const runtimes = Object.fromEntries(hosting.server.listSessions().map((session) => [session.tenant, session.runtime]));
  t.deepEqual(runtimes, { alpha: 'runsc', beta: 'runc', gamma: TEST_RUNTIME ?? 'runc' }, "gamma has none of its own: the operator's");
});

test('a tenant whose runtime the engine lacks is refused at session open, in one line saying how to set it up', async (t) => {
  const { hosting, keys } = t.context;
  const error = await t.throwsAsync(connectAs(hosting.server.url, keys['delta']!));
  t.regex(error!.message, /no runtime named toolcell-no-such-runtime/);
  t.true(hosting.server.listSessions().every((session) => session.tenant !== 'delta'));
});
