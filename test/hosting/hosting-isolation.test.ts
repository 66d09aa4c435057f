import anyTest, { type TestFn } from 'ava';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HostingEvent } from '../../src/hosting/operations/hosting-events.js';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, listToolsMessage, post, startHosting, type Hosting } from '../helpers/hosting.js';

/**
 * The boundary between two tenants made by `toolcell tenant add`, with
 * real Docker, real HTTP and the SDK client: sessions, workspaces, file
 * tools and commands. Each test would fail if the boundary broke.
 */
const test = (await requireDocker(anyTest as TestFn<{ hosting: Hosting; keys: Record<string, string> }>, 'hosting/isolation')).serial;

anyTest.before(async (t) => {
  const dir = await hostingFolder({ teardown: () => {} }, 'toolcell-hosting-iso-');
  const file = join(dir, 'tenants.json');
  const keys = { alpha: await addTenant(file, 'alpha'), beta: await addTenant(file, 'beta') };
  const context = t.context as { hosting: Hosting; keys: Record<string, string> };
  context.keys = keys;
  context.hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
});

anyTest.after.always(async (t) => {
  await (t.context as { hosting?: Hosting }).hosting?.close();
});

const workspaceOf = (hosting: Hosting, tenant: string) => join(hosting.dataDir, 'tenants', tenant, 'workspace');

test("B's key with A's session id gets the 404 of an unknown id", async (t) => {
  const { hosting, keys } = t.context;
  const alpha = await connectAs(hosting.server.url, keys['alpha']!);
  t.teardown(() => alpha.close());
  const asBeta = await post(hosting.server.url, listToolsMessage(), { Authorization: `Bearer ${keys['beta']}`, 'Mcp-Session-Id': alpha.sessionId });
  const unknown = await post(hosting.server.url, listToolsMessage(), { Authorization: `Bearer ${keys['beta']}`, 'Mcp-Session-Id': randomUUID() });
  t.is(asBeta.status, 404);
  t.is(unknown.status, 404);
  t.is(await asBeta.text(), await unknown.text());
  // A's own key still reaches it.
  const asAlpha = await post(hosting.server.url, listToolsMessage(), { Authorization: `Bearer ${keys['alpha']}`, 'Mcp-Session-Id': alpha.sessionId });
  t.is(asAlpha.status, 200);
});

test('guessed session ids get 404', async (t) => {
  const { hosting, keys } = t.context;
  const alpha = await connectAs(hosting.server.url, keys['alpha']!);
  t.teardown(() => alpha.close());
  for (const guess of [randomUUID(), alpha.sessionId.replace(/.$/, (c) => (c === '0' ? '1' : '0')), '1', '../', '']) {
    const response = await post(hosting.server.url, listToolsMessage(), { Authorization: `Bearer ${keys['alpha']}`, 'Mcp-Session-Id': guess });
    t.true(response.status === 404 || (guess === '' && response.status === 400), `${JSON.stringify(guess)} gave ${response.status}`);
  }
});

test("A's file tools cannot reach B's workspace by absolute path, .. or a planted symlink", async (t) => {
  const { hosting, keys } = t.context;
  const beta = await connectAs(hosting.server.url, keys['beta']!);
  t.teardown(() => beta.close());
  t.is((await call(beta.client, 'write_file', { file_path: 'secret.txt', content: 'beta-secret' })).errorType, undefined);
  const betaFile = join(workspaceOf(hosting, 'beta'), 'secret.txt');
  t.is(await readFile(betaFile, 'utf8'), 'beta-secret');

  const alpha = await connectAs(hosting.server.url, keys['alpha']!);
  t.teardown(() => alpha.close());
  const absolute = await call(alpha.client, 'read_file', { file_path: betaFile });
  t.is(absolute.errorType, 'path_not_in_workspace', absolute.text);
  const dotdot = await call(alpha.client, 'read_file', { file_path: '../../beta/workspace/secret.txt' });
  t.is(dotdot.errorType, 'path_not_in_workspace', dotdot.text);
  const overwrite = await call(alpha.client, 'write_file', { file_path: betaFile, content: 'owned' });
  t.is(overwrite.errorType, 'path_not_in_workspace', overwrite.text);
  // A symlink planted by A's own command, pointing at B's workspace on the host.
  const planted = await call(alpha.client, 'run_shell_command', { command: `ln -s ${workspaceOf(hosting, 'beta')} link && ln -s ${betaFile} file && ls -l` });
  t.is(planted.errorType, undefined, planted.text);
  for (const path of ['link/secret.txt', 'file']) {
    const through = await call(alpha.client, 'read_file', { file_path: path });
    t.truthy(through.errorType, `${path}: ${through.text}`);
    t.false(through.text.includes('beta-secret'));
  }
  const written = await call(alpha.client, 'write_file', { file_path: 'link/secret.txt', content: 'owned' });
  t.truthy(written.errorType, written.text);
  t.is(await readFile(betaFile, 'utf8'), 'beta-secret');
});

test("A's command cannot see B's workspace or files", async (t) => {
  const { hosting, keys } = t.context;
  const beta = await connectAs(hosting.server.url, keys['beta']!);
  t.teardown(() => beta.close());
  t.is((await call(beta.client, 'write_file', { file_path: 'only-beta.txt', content: 'beta-only' })).errorType, undefined);
  const alpha = await connectAs(hosting.server.url, keys['alpha']!);
  t.teardown(() => alpha.close());
  const betaWorkspace = workspaceOf(hosting, 'beta');
  const result = await call(alpha.client, 'run_shell_command', {
    command: `cat ${betaWorkspace}/only-beta.txt; ls ${join(hosting.dataDir, 'tenants')}; find / \\( -path /proc -o -path /sys \\) -prune -o -name 'only-beta*' -print 2>/dev/null | head -3; echo done`,
  });
  t.is(result.errorType, undefined, result.text);
  t.true(result.text.includes('done'));
  t.false(result.text.includes('beta-only'), result.text);
  t.true(result.text.includes('only-beta.txt: No such file or directory'), result.text);
  // find printed no path: the file exists nowhere in A's container.
  t.notRegex(result.text, /^\/\S*only-beta/m);
});

test('each MCP session has its own container; sessions of a tenant share its workspace', async (t) => {
  const { hosting, keys } = t.context;
  const one = await connectAs(hosting.server.url, keys['alpha']!);
  const two = await connectAs(hosting.server.url, keys['alpha']!);
  t.teardown(() => Promise.all([one.close(), two.close()]).then(() => {}));
  const host = async (client: typeof one.client) => (await call(client, 'run_shell_command', { command: 'cat /etc/hostname; echo x > /tmp/mine' })).text;
  const [a, b] = [await host(one.client), await host(two.client)];
  const name = (text: string) => /Output: (\S+)/.exec(text)?.[1];
  t.truthy(name(a));
  t.not(name(a), name(b));
  await call(one.client, 'write_file', { file_path: 'shared.txt', content: 'both' });
  t.true((await call(two.client, 'read_file', { file_path: 'shared.txt' })).text.includes('both'));
});

test("A's command cannot reach B's container: its processes, its /tmp, a network to it, or the engine", async (t) => {
  const { hosting, keys } = t.context;
  const beta = await connectAs(hosting.server.url, keys['beta']!);
  t.teardown(() => beta.close());
  // B leaves a file in its /tmp and a process running, each with a marker A must never see.
  const planted = await call(beta.client, 'run_shell_command', { command: 'echo beta > /tmp/beta-tmp-marker && ls /tmp', is_background: false });
  t.true(planted.text.includes('beta-tmp-marker'), planted.text);
  const running = await call(beta.client, 'run_shell_command', { command: 'sleep 300 && echo beta-proc-marker', is_background: true });
  t.is(running.errorType, undefined, running.text);

  const alpha = await connectAs(hosting.server.url, keys['alpha']!);
  t.teardown(() => alpha.close());
  const probe = await call(alpha.client, 'run_shell_command', {
    command: [
      'ls -a /tmp',
      "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done",
      'echo "== net"; cat /proc/net/dev',
      'echo "== route"; cat /proc/net/route',
      'ls -l /var/run/docker.sock /run/docker.sock 2>&1',
      '(exec 3<>/dev/tcp/172.17.0.1/2375) 2>&1 || echo no-tcp',
      'echo done',
    ].join('; '),
  });
  t.is(probe.errorType, undefined, probe.text);
  t.true(probe.text.includes('done'), probe.text);
  t.false(probe.text.includes('beta-tmp-marker'), 'B’s /tmp is visible to A');
  t.false(probe.text.includes('beta-proc-marker'), 'B’s processes are visible to A');
  // Loopback is A's only interface, and it has no route: no network joins it to B or to the host.
  // The command's text is echoed in the result too: read the sections after its last mention.
  const section = (from: string, to: string) => probe.text.slice(probe.text.lastIndexOf(from), probe.text.lastIndexOf(to));
  const interfaces = [...section('== net', '== route').matchAll(/^\s*([\w.@-]+):/gm)].map((match) => match[1]);
  t.deepEqual(interfaces, ['lo'], probe.text);
  t.notRegex(section('== route', 'docker.sock'), /^\w+\s+[0-9A-F]{8}/m, 'A has a route');
  t.regex(probe.text, /docker\.sock'?: No such file or directory/);
  t.true(probe.text.includes('no-tcp'), probe.text);

  // From the engine's side: the two containers share no network and no mount source.
  const docker = createEngineClient();
  const containerOf = async (client: typeof alpha.client) =>
    /Output: (\S+)/.exec((await call(client, 'run_shell_command', { command: 'cat /etc/hostname' })).text)?.[1];
  const [alphaId, betaId] = [await containerOf(alpha.client), await containerOf(beta.client)];
  t.truthy(alphaId && betaId);
  const [alphaInfo, betaInfo] = await Promise.all([docker.getContainer(alphaId!).inspect(), docker.getContainer(betaId!).inspect()]);
  t.not(alphaInfo.Id, betaInfo.Id);
  t.is(alphaInfo.HostConfig.NetworkMode, 'none');
  t.is(betaInfo.HostConfig.NetworkMode, 'none');
  // tmpfs mounts (/tmp among them) have no source: each is the container's own memory.
  const sources = (info: typeof alphaInfo) =>
    new Set(info.Mounts.filter((mount) => mount.Type === 'bind' || mount.Type === 'volume').map((mount) => mount.Source));
  t.true(sources(alphaInfo).size > 0, JSON.stringify(alphaInfo.Mounts));
  const shared = [...sources(alphaInfo)].filter((source) => sources(betaInfo).has(source));
  t.deepEqual(shared, [], `shared mount sources: ${shared.join(', ')}`);
});

test('every request without a valid key gets 401 with WWW-Authenticate, and the secret is never in an event', async (t) => {
  const { hosting, keys } = t.context;
  const forged = `${keys['alpha']!.slice(0, 16)}${'A'.repeat(43)}`;
  for (const headers of <Array<Record<string, string>>>[
    {},
    { Authorization: 'Basic Zm9vOmJhcg==' },
    { Authorization: 'Bearer nope' },
    { Authorization: `Bearer ${forged}` },
  ]) {
    const response = await post(hosting.server.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, headers);
    t.is(response.status, 401);
    t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer realm="toolcell"/);
  }
  const failures = hosting.observer.events.filter((event) => event.event === 'auth_failure');
  t.true(failures.length >= 4);
  t.false(JSON.stringify(hosting.observer.events).includes('A'.repeat(43)));
  t.false(JSON.stringify(hosting.observer.events).includes(keys['alpha']!.slice(16)));
});

test('a tool call is recorded before its response is sent, and sessions open and close with a reason', async (t) => {
  const { hosting, keys } = t.context;
  const alpha = await connectAs(hosting.server.url, keys['alpha']!);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let recorded!: (event: HostingEvent) => void;
  const seen = new Promise<HostingEvent>((resolve) => (recorded = resolve));
  hosting.observer.hold = (event) => {
    if (event.event !== 'tool_call' || event.session !== alpha.sessionId) return undefined;
    recorded(event);
    return released;
  };
  t.teardown(() => (hosting.observer.hold = undefined));
  let answered = false;
  const pending = call(alpha.client, 'list_directory', { dir_path: '.' }).then((result) => ((answered = true), result));
  t.like(await seen, { event: 'tool_call', tenant: 'alpha', tool: 'list_directory', outcome: 'success' });
  // A full round trip on the same server: had the answer been sent, it would have arrived by now.
  await post(hosting.server.url, listToolsMessage(), { Authorization: `Bearer ${keys['alpha']}`, 'Mcp-Session-Id': alpha.sessionId });
  t.false(answered, 'the response was sent before its event was recorded');
  release();
  t.is((await pending).errorType, undefined);
  t.truthy(hosting.observer.events.find((event) => event.event === 'session_open' && event.session === alpha.sessionId));
  await alpha.close();
  t.like(await hosting.observer.waitFor((event) => event.event === 'session_close' && event.session === alpha.sessionId), {
    tenant: 'alpha',
    reason: 'client',
  });
  t.false(hosting.server.listSessions().some((session) => session.id === alpha.sessionId));
});
