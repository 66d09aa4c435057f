/**
 * `toolcell tenant set` on a running hosting server (real Docker, real
 * HTTP, the SDK client): the server picks the change up as it does a
 * `tenant add`, and the tenant's key keeps working, since none is made or
 * revoked.
 */
import anyTest from 'ava';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, connectAs, connectTenant, hostingFolder, startHosting } from '../helpers/hosting.js';

const test = (await requireDocker(anyTest, 'hosting/tenant-set-live')).serial;

test('a running server applies tenant set to the next session: sessions lowered refuses it, raised lets it in, with the same key', async (t) => {
  const dir = await hostingFolder(t, 'toolcell-tenant-set-');
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'acme', ['--limit', 'sessions=2']);
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  await connectTenant(t, hosting.server.url, key);

  const lowered = await runCli(['tenant', 'set', 'acme', '--tenants', file, '--limit', 'sessions=1']);
  t.is(lowered.code, 0, lowered.stderr);
  t.is(lowered.stdout, '');
  t.true(await eventually(async () => hosting.store.tenant('acme')?.limits.sessions === 1, 30_000), 'the server reloaded the file');
  const refused = await connectAs(hosting.server.url, key).then(
    (connection) => connection.close().then(() => 'opened'),
    (error: unknown) => String(error),
  );
  t.regex(refused, /quota_exceeded: the limit sessions \(1 at once\)/);

  t.is((await runCli(['tenant', 'set', 'acme', '--tenants', file, '--limit', 'sessions=3'])).code, 0);
  t.true(await eventually(async () => hosting.store.tenant('acme')?.limits.sessions === 3, 30_000));
  const second = await connectTenant(t, hosting.server.url, key);
  t.truthy(second.sessionId, 'the same key opens a second session');
});
