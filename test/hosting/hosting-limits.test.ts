import anyTest, { type TestFn } from 'ava';
import { join } from 'node:path';
import { LABELS } from '../../src/backends/docker/labels.js';
import { runCli } from '../helpers/cli.js';
import { containersWithLabel, eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, listToolsMessage, post, startHosting, type Hosting } from '../helpers/hosting.js';

/**
 * Per-tenant limits and the tenants file's live changes, with real Docker,
 * real HTTP and the SDK client. Every wait is for an event or a bounded
 * poll; no duration is asserted.
 */
interface Context {
  hosting: Hosting;
  file: string;
  keys: Record<string, string>;
}
const test = (await requireDocker(anyTest as TestFn<Context>, 'hosting/limits')).serial;

const TENANTS: Record<string, string[]> = {
  rate: ['--limit', 'callsPerMinute=2'],
  chatty: ['--limit', 'requestsPerMinute=8'],
  solo: ['--limit', 'sessions=1', '--limit', 'concurrentCalls=1'],
  small: ['--limit', 'memory=256m', '--limit', 'pids=64', '--limit', 'cpus=0.5', '--limit', 'commandTimeoutSeconds=2'],
  idle: ['--limit', 'idleSeconds=1'],
  short: ['--limit', 'maxSessionSeconds=2'],
  keep: [],
  gone: [],
  good: [],
};

anyTest.before(async (t) => {
  const dir = await hostingFolder({ teardown: () => {} }, 'toolcell-hosting-limits-');
  const context = t.context as Context;
  context.file = join(dir, 'tenants.json');
  context.keys = {};
  for (const [name, limits] of Object.entries(TENANTS)) context.keys[name] = await addTenant(context.file, name, limits);
  context.hosting = await startHosting({ tenantsFile: context.file, dataDir: join(dir, 'data') });
});

anyTest.after.always(async (t) => {
  await (t.context as Partial<Context>).hosting?.close();
});

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const toolsCall = (name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: `raw-${Math.random()}`,
  method: 'tools/call',
  params: { name, arguments: args },
});

test('calls past callsPerMinute get 429 with Retry-After, naming the limit', async (t) => {
  const { hosting, keys } = t.context;
  const rate = await connectAs(hosting.server.url, keys['rate']!);
  t.teardown(() => rate.close());
  t.is((await call(rate.client, 'list_directory', { dir_path: '.' })).errorType, undefined);
  t.is((await call(rate.client, 'list_directory', { dir_path: '.' })).errorType, undefined);
  const refused = await post(hosting.server.url, toolsCall('list_directory', { dir_path: '.' }), { ...auth(keys['rate']!), 'Mcp-Session-Id': rate.sessionId });
  t.is(refused.status, 429);
  t.true(Number(refused.headers.get('retry-after')) >= 1);
  const body = (await refused.json()) as { error: { message: string; data: { type: string; limit: string } } };
  t.like(body.error.data, { type: 'quota_exceeded', limit: 'callsPerMinute' });
  t.regex(body.error.message, /callsPerMinute/);
  t.truthy(hosting.observer.events.find((event) => event.event === 'quota_refusal' && event.tenant === 'rate' && event.limit === 'callsPerMinute'));
  // Requests that are not calls still pass.
  t.is((await post(hosting.server.url, listToolsMessage(), { ...auth(keys['rate']!), 'Mcp-Session-Id': rate.sessionId })).status, 200);
});

test('requests of any kind past requestsPerMinute get 429 with Retry-After before anything is done for them; another tenant is served', async (t) => {
  const { hosting, keys } = t.context;
  const chatty = await connectAs(hosting.server.url, keys['chatty']!);
  t.teardown(() => chatty.close().catch(() => {}));
  const url = hosting.server.url;
  const headers = { ...auth(keys['chatty']!), 'Mcp-Session-Id': chatty.sessionId };
  // Pings, notifications and session listings, none of them a tool call, until the bucket (8, less the handshake's) is empty.
  const kinds = [
    () => post(url, { jsonrpc: '2.0', id: `ping-${Math.random()}`, method: 'ping' }, headers),
    () => post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers),
    () => fetch(new URL('/sessions', url), { headers: auth(keys['chatty']!) }),
  ];
  let refused: Response | undefined;
  const statuses: number[] = [];
  for (let i = 0; i < 20 && refused === undefined; i++) {
    const answer = await kinds[i % kinds.length]!();
    statuses.push(answer.status);
    if (answer.status === 429) refused = answer;
    else await answer.text();
  }
  t.truthy(refused, `statuses ${statuses.join(', ')}`);
  t.true(statuses.length <= 9, `refused after ${statuses.length - 1} requests, the handshake's included`);
  t.true(Number(refused!.headers.get('retry-after')) >= 1);
  const text = await refused!.text();
  t.regex(text, /quota_exceeded: the limit requestsPerMinute \(8 requests a minute, of any kind\) is reached; retry after \d+ s/);
  // Every kind is refused alike, /sessions under the same code, and the refusal is audited once per interval.
  for (const kind of kinds) {
    const answer = await kind();
    t.is(answer.status, 429);
    await answer.text();
  }
  const sessions = await fetch(new URL('/sessions', url), { headers: auth(keys['chatty']!) });
  t.like(await sessions.json(), { error: 'quota_exceeded' });
  t.truthy(hosting.observer.events.find((event) => event.event === 'quota_refusal' && event.tenant === 'chatty' && event.limit === 'requestsPerMinute'));
  // Another tenant's requests are its own bucket's.
  const good = await connectAs(url, keys['good']!);
  t.teardown(() => good.close().catch(() => {}));
  t.is((await post(url, listToolsMessage(), { ...auth(keys['good']!), 'Mcp-Session-Id': good.sessionId })).status, 200);
});

test('a session past the sessions limit is refused with quota_exceeded', async (t) => {
  const { hosting, keys } = t.context;
  const first = await connectAs(hosting.server.url, keys['solo']!);
  t.teardown(() => first.close());
  const error = await t.throwsAsync(connectAs(hosting.server.url, keys['solo']!));
  t.regex(error!.message, /quota_exceeded: the limit sessions \(1 at once\)/);
  t.truthy(hosting.observer.events.find((event) => event.event === 'quota_refusal' && event.tenant === 'solo' && event.limit === 'sessions'));
  // Another tenant is not affected.
  const other = await connectAs(hosting.server.url, keys['good']!);
  await other.close();
  // The slot is free as soon as the DELETE that ends the first session is answered: no wait.
  await first.close();
  t.truthy(hosting.observer.events.find((event) => event.event === 'session_close' && event.session === first.sessionId));
  const again = await connectAs(hosting.server.url, keys['solo']!);
  await again.close();
  await hosting.observer.waitFor((event) => event.event === 'session_close' && event.session === again.sessionId);
});

test('a call past concurrentCalls is a quota_exceeded tool error', async (t) => {
  const { hosting, keys } = t.context;
  const solo = await connectAs(hosting.server.url, keys['solo']!);
  t.teardown(() => solo.close());
  const cancel = new AbortController();
  const running = call(solo.client, 'run_shell_command', { command: 'sleep 60' }, cancel.signal).catch((error: unknown) => error);
  t.true(await eventually(async () => hosting.server.listSessions().some((session) => session.id === solo.sessionId && session.calls === 1), 30_000, 20));
  const refused = await call(solo.client, 'list_directory', { dir_path: '.' });
  t.is(refused.errorType, 'quota_exceeded');
  t.regex(refused.text, /concurrentCalls \(1 at once\)/);
  cancel.abort();
  await running;
  t.true(await eventually(async () => (await call(solo.client, 'list_directory', { dir_path: '.' })).errorType === undefined, 30_000, 100));
});

test("container limits: the tenant's memory, pids and CPUs are on its container, and commandTimeoutSeconds ends a command", async (t) => {
  const { hosting, keys } = t.context;
  const small = await connectAs(hosting.server.url, keys['small']!);
  t.teardown(() => small.close());
  // cgroup v2 or v1, whichever the host has.
  const files = ['memory.max', 'memory/memory.limit_in_bytes', 'pids.max', 'pids/pids.max', 'cpu.max', 'cpu/cpu.cfs_quota_us'].map(
    (f) => `/sys/fs/cgroup/${f}`,
  );
  const limits = await call(small.client, 'run_shell_command', {
    command: `for f in ${files.join(' ')}; do [ -r $f ] && echo "$(basename $f)=$(cat $f)"; done; true`,
  });
  t.regex(limits.text, /^(Output: )?memory\.(max|limit_in_bytes)=268435456$/m, limits.text);
  t.regex(limits.text, /^(Output: )?pids\.max=64$/m, limits.text);
  t.regex(limits.text, /^(Output: )?(cpu\.max=50000 100000|cpu\.cfs_quota_us=50000)$/m, limits.text);
  const slow = await call(small.client, 'run_shell_command', { command: 'sleep 30' });
  t.is(slow.errorType, 'execution_timeout', slow.text);
});

test('an idle session is closed and its container removed', async (t) => {
  const { hosting, keys } = t.context;
  const idle = await connectAs(hosting.server.url, keys['idle']!);
  t.teardown(() => idle.close());
  await call(idle.client, 'run_shell_command', { command: 'true' });
  const workspace = join(hosting.dataDir, 'tenants', 'idle', 'workspace');
  t.like(await hosting.observer.waitFor((event) => event.event === 'session_close' && event.session === idle.sessionId), { reason: 'idle' });
  t.true(await eventually(async () => (await containersWithLabel(LABELS.workspace, workspace)).length === 0));
  t.is((await post(hosting.server.url, listToolsMessage(), { ...auth(keys['idle']!), 'Mcp-Session-Id': idle.sessionId })).status, 404);
});

test('a session past maxSessionSeconds is closed even while a call runs', async (t) => {
  const { hosting, keys } = t.context;
  const short = await connectAs(hosting.server.url, keys['short']!);
  t.teardown(() => short.close());
  // The client is not told (its request stays open until its own timeout or close); the server's side is what counts.
  void call(short.client, 'run_shell_command', { command: 'sleep 60' }).catch(() => {});
  t.like(await hosting.observer.waitFor((event) => event.event === 'session_close' && event.session === short.sessionId), { reason: 'max_lifetime' });
  const workspace = join(hosting.dataDir, 'tenants', 'short', 'workspace');
  t.true(await eventually(async () => (await containersWithLabel(LABELS.workspace, workspace)).length === 0));
});

test('a revoked key is refused while the tenant’s other key still works', async (t) => {
  const { hosting, keys, file } = t.context;
  const second = await addTenant(file, 'keep');
  const id = second.slice(3, 15);
  t.true(await eventually(async () => (await post(hosting.server.url, listToolsMessage(), auth(second))).status !== 401, 10_000, 50));
  const revoke = await runCli(['tenant', 'revoke', 'keep', '--key', id, '--tenants', file]);
  t.is(revoke.code, 0, revoke.stderr);
  t.true(await eventually(async () => (await post(hosting.server.url, listToolsMessage(), auth(second))).status === 401, 10_000, 50));
  t.truthy(await hosting.observer.waitFor((event) => event.event === 'auth_failure' && event.reason === 'revoked_key'));
  const first = await connectAs(hosting.server.url, keys['keep']!);
  await first.close();
});

test("a removed tenant's live sessions are closed and its key refused", async (t) => {
  const { hosting, keys, file } = t.context;
  const gone = await connectAs(hosting.server.url, keys['gone']!);
  t.teardown(() => gone.close());
  await call(gone.client, 'run_shell_command', { command: 'true' });
  const removed = await runCli(['tenant', 'remove', 'gone', '--tenants', file]);
  t.is(removed.code, 0, removed.stderr);
  t.like(await hosting.observer.waitFor((event) => event.event === 'session_close' && event.session === gone.sessionId), { reason: 'tenant_removed' });
  const workspace = join(hosting.dataDir, 'tenants', 'gone', 'workspace');
  t.true(await eventually(async () => (await containersWithLabel(LABELS.workspace, workspace)).length === 0));
  t.is((await post(hosting.server.url, listToolsMessage(), { ...auth(keys['gone']!), 'Mcp-Session-Id': gone.sessionId })).status, 401);
});

test('1,000 requests with bad keys are refused and logged while a good key is served', async (t) => {
  const { hosting, keys } = t.context;
  const good = await connectAs(hosting.server.url, keys['good']!);
  t.teardown(() => good.close());
  const before = hosting.observer.events.filter((event) => event.event === 'auth_failure').length;
  const statuses: number[] = [];
  const flood = (async () => {
    for (let batch = 0; batch < 20; batch++) {
      const forged = Array.from({ length: 50 }, (_, i) => `tc_${'x'.repeat(12)}_${String(batch * 50 + i).padStart(43, 'A')}`);
      const answers = await Promise.all(forged.map((key) => post(hosting.server.url, listToolsMessage(), auth(key)).then((response) => response.status)));
      statuses.push(...answers);
    }
  })();
  const served: Array<string | undefined> = [];
  // At most 500 calls, under the tenant's callsPerMinute (600) however long the flood takes on a loaded machine.
  while (statuses.length < 1000 && served.length < 500) served.push((await call(good.client, 'list_directory', { dir_path: '.' })).errorType);
  await flood;
  t.is(statuses.length, 1000);
  t.true(statuses.every((status) => status === 401));
  t.true(served.length >= 1);
  t.true(served.every((errorType) => errorType === undefined));
  t.is(hosting.observer.events.filter((event) => event.event === 'auth_failure').length - before, 1000);
});
