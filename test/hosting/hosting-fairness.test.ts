import anyTest from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, startHosting } from '../helpers/hosting.js';

/** The server-wide call cap is shared in turn: a busy tenant's queue does not starve a quiet one. */
const test = (await requireDocker(anyTest, 'hosting/fairness')).serial;

test('when the server is full, a quiet tenant is served before the busy tenant’s later calls', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const keys = { busy: await addTenant(file, 'busy'), quiet: await addTenant(file, 'quiet') };
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data'), maxConcurrentCalls: 1 });
  t.teardown(() => hosting.close());
  const busy = await connectAs(hosting.server.url, keys.busy);
  const quiet = await connectAs(hosting.server.url, keys.quiet);
  t.teardown(() => Promise.all([busy.close(), quiet.close()]).then(() => {}));
  // Containers first, so the calls below only wait for the gate.
  await call(busy.client, 'run_shell_command', { command: 'true' });
  await call(quiet.client, 'run_shell_command', { command: 'true' });

  const done: string[] = [];
  const run = (who: string, client: typeof busy.client, command: string) => call(client, 'run_shell_command', { command }).then(() => void done.push(who));
  // The busy tenant's first call holds the only slot until the test lets it go.
  const holding = run('busy-1', busy.client, 'while [ ! -e go ]; do sleep 0.05; done');
  t.true(await eventually(async () => hosting.server.runningCalls === 1, 30_000, 20));
  const later = [run('busy-2', busy.client, 'true'), run('busy-3', busy.client, 'true')];
  t.true(await eventually(async () => hosting.server.queuedCalls === 2, 30_000, 20));
  const quietCall = run('quiet', quiet.client, 'true');
  t.true(await eventually(async () => hosting.server.queuedCalls === 3, 30_000, 20));
  await writeFile(join(hosting.dataDir, 'tenants', 'busy', 'workspace', 'go'), '');
  await Promise.all([holding, ...later, quietCall]);
  t.deepEqual(done, ['busy-1', 'busy-2', 'quiet', 'busy-3']);
});
