/**
 * Operator mistakes that would open a door, on the real `toolcell serve
 * --tenants` (a child process) and a real in-process server: the admin API
 * reachable through the tenants' port (and so through any proxy that
 * forwards it), a load balancer told "ready" while the server drains, and
 * hand edits of the tenants file under a running server (another tenant's
 * workspace through a symlink; a memory limit no container accepts).
 */
import anyTest, { type TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import { readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateApiKey } from '../../src/hosting/auth/api-key.js';
import { tenantSlug } from '../../src/hosting/tenants/disk/tenant-slug.js';
import { defaultWorkspacePath } from '../../src/hosting/tenants/tenant-workspace.js';
import type { TenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { runCli } from '../helpers/cli.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { printedBy, startCliServer } from '../helpers/hosting-cli.js';
import { addTenant, call, connectAs, connectTenant, hostingFolder, post, listToolsMessage, startHosting } from '../helpers/hosting.js';

const test = await requireDocker(anyTest as TestFn<unknown>, 'hosting/operator-mistakes');

test("the admin API answers on its own loopback listener, never on the tenants' port", async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'acme');
  const adminKeyFile = join(dir, 'admin.key');
  const adminKey = randomBytes(32).toString('base64url');
  await writeFile(adminKeyFile, `${adminKey}\n`, { mode: 0o600 });

  const alone = await runCli(['serve', '--http', '127.0.0.1:0', '--tenants', file, '--data-dir', join(dir, 'data'), '--admin-key-file', adminKeyFile]);
  t.is(alone.code, 2, '--admin-key-file without --admin is a usage error');
  t.regex(alone.stderr, /--admin \[HOST:\]PORT and --admin-key-file FILE go together/);

  const server = await startCliServer(t, ['--tenants', file, '--data-dir', join(dir, 'data'), '--admin', '0', '--admin-key-file', adminKeyFile]);
  const adminUrl = await printedBy(server, /admin API \(\/admin\/\) for operators at (http:\/\/127\.0\.0\.1:\d+)/);
  const tenantsBase = server.url.replace(/\/mcp$/, '');
  const acme = await connectTenant(t, server.url, key);
  const asAdmin = { headers: { Authorization: `Bearer ${adminKey}` } };
  for (const path of ['/admin/sessions', '/admin/', '/admin/sessions/x/close']) {
    const response = await fetch(`${tenantsBase}${path}`, { ...asAdmin, method: path.endsWith('close') ? 'POST' : 'GET' });
    t.is(response.status, 404, `${path} on the tenants' port`);
    t.false((await response.text()).includes(acme.sessionId));
  }
  const listed = (await (await fetch(`${adminUrl}/admin/sessions`, asAdmin)).json()) as { sessions: Array<{ id: string; tenant: string }> };
  t.like(listed.sessions, [{ id: acme.sessionId, tenant: 'acme' }]);
  const cli = await runCli(['hosting', 'sessions', '--server', adminUrl, '--admin-key-file', adminKeyFile, '--json']);
  t.is(cli.code, 0, cli.stderr);
  t.like(JSON.parse(cli.stdout), [{ id: acme.sessionId }]);
  t.is((await fetch(`${adminUrl}/mcp`, { ...asAdmin, method: 'POST' })).status, 404, 'and the admin listener serves nothing of the tenants');
});

test('/readyz says not ready from SIGTERM on, while a running call drains', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'acme');
  const server = await startCliServer(t, ['--tenants', file, '--data-dir', join(dir, 'data'), '--metrics', '0', '--drain-seconds', '120']);
  const metricsUrl = await printedBy(server, /for operators at (http:\/\/127\.0\.0\.1:\d+)/);
  t.is((await fetch(`${metricsUrl}/readyz`)).status, 200, 'ready before');
  const acme = await connectAs(server.url, key);
  t.teardown(() => acme.client.close().catch(() => {}));
  // A call that runs until the test lets it end (a file appears in its workspace; as root, a capped one of its own).
  const workspace = process.getuid?.() === 0 ? join(dir, 'data', 'workspaces', tenantSlug('acme')) : defaultWorkspacePath(join(dir, 'data'), 'acme');
  const running = call(acme.client, 'run_shell_command', { command: 'touch started; while [ ! -e release ]; do sleep 0.1; done; echo drained' });
  t.true(await eventually(async () => (await stat(join(workspace, 'started')).catch(() => undefined)) !== undefined, 60_000), 'the call runs');
  const stopped = server.stop('SIGTERM');
  t.true(await eventually(async () => (await fetch(`${metricsUrl}/readyz`)).status === 503, 60_000), 'not ready once SIGTERM came');
  const detail = (await (await fetch(`${metricsUrl}/readyz`)).json()) as { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> };
  t.like(detail, { ready: false, checks: { serving: { ok: false } } });
  t.regex(detail.checks['serving']!.detail, /stopping/);
  const tenantsPort = await fetch(server.url.replace(/\/mcp$/, '/readyz')).then(
    (response) => response.status,
    () => 'refused',
  );
  t.not(tenantsPort, 200, "the tenants' port takes no new work either");
  // The call is still running: the drain is on, and /readyz already says no.
  await writeFile(join(workspace, 'release'), '');
  t.regex((await running).text, /drained/);
  t.like(await stopped, { code: 0 });
});

test('hand edits under a running server: a symlink to another tenant’s workspace and a memory limit no container takes are refused; everyone goes on as before', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const barKey = await addTenant(file, 'bar', ['--limit', 'memory=256m']);
  const hosting = await startHosting({ tenantsFile: file, dataDir });
  t.teardown(() => hosting.close());
  const bar = await connectTenant(t, hosting.server.url, barKey);
  t.is((await call(bar.client, 'write_file', { file_path: 'secret.txt', content: 'bar-only' })).errorType, undefined);

  // The operator (or a script) gives a new tenant a path that is, after a symlink, bar's workspace.
  await symlink(defaultWorkspacePath(dataDir, 'bar'), join(dir, 'shared'));
  const foo = generateApiKey();
  const content = JSON.parse(await readFile(file, 'utf8')) as TenantsFile;
  content.tenants['foo'] = { workspace: join(dir, 'shared'), keys: [{ id: foo.id, hash: foo.hash, createdAt: new Date().toISOString() }] };
  await writeFile(file, JSON.stringify(content));
  await hosting.store.reload();
  const refused = await post(hosting.server.url, listToolsMessage(), { Authorization: `Bearer ${foo.key}` });
  t.is(refused.status, 401, 'foo was never let in');
  await t.throwsAsync(connectAs(hosting.server.url, foo.key));

  // Then bar's memory is set to what no container accepts: bar keeps its last good limits and opens sessions.
  delete content.tenants['foo'];
  content.tenants['bar']!.limits = { memory: '2048g' };
  await writeFile(file, JSON.stringify(content));
  await hosting.store.reload();
  t.is(hosting.store.tenant('bar')?.limits.memory, 256 * 1024 ** 2);
  const again = await connectTenant(t, hosting.server.url, barKey);
  t.regex((await call(again.client, 'run_shell_command', { command: 'cat secret.txt' })).text, /bar-only/);
});
