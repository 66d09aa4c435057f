/**
 * Work whose cost a hostile tenant chooses, on a real hosting server (real
 * Docker, real HTTP, the MCP SDK client): catastrophic regular expressions
 * in grep_search, slow file tool calls that would hold every shared worker,
 * and web pages built to be slow to turn into text. Each time another tenant
 * is served meanwhile, and so is /healthz. No duration is asserted: the
 * other tenant being answered while the hostile work is still under way is
 * the property (the durations are logged, for the record).
 *
 * Tenants: `hostile` (5 s per file tool call, may fetch from the local web
 * server), `slowpoke` (the test tools' `slow`, 10 minutes per call) and
 * `quiet`.
 */
import anyTest from 'ava';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { healthzHandler } from '../../src/hosting/health/health-handlers.js';
import { sharedHtmlTextPool } from '../../src/tools/web/html-text-pool.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, startHosting, type Hosting } from '../helpers/hosting.js';
import { testToolModuleUrl } from '../helpers/pool.js';

const test = (await requireDocker(anyTest, 'hosting/hostile-work')).serial;

interface Web {
  port: number;
  /** Resolves when the body of `path` has been sent in full. */
  served(path: string): Promise<void>;
  close(): Promise<void>;
}

/** The page: 1.5 MB of nested divs. */
const NESTED = `${'<div>'.repeat(136_000)}deep text${'</div>'.repeat(136_000)}`;
/** 5 MB of paragraphs: shallow, so not flattened, and seconds of html-to-text's time. */
const SLOW = '<p>a'.repeat(1_250_000);

async function startWeb(): Promise<Web> {
  const waiters = new Map<string, Array<() => void>>();
  const server: Server = createServer((req, res: ServerResponse) => {
    const body = req.url === '/nested' ? NESTED : req.url === '/slow' ? SLOW : undefined;
    if (body === undefined) return void res.writeHead(404).end();
    res.on('finish', () => {
      for (const resolve of waiters.get(req.url!) ?? []) resolve();
      waiters.delete(req.url!);
    });
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    served: (path) => new Promise((resolve) => waiters.set(path, [...(waiters.get(path) ?? []), resolve])),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Context {
  hosting: Hosting;
  web: Web;
  keys: { hostile: string; slowpoke: string; quiet: string };
}

anyTest.before(async (t) => {
  const context = t.context as Context;
  const dir = await hostingFolder({ teardown: () => {} }, 'toolcell-hostile-work-');
  const web = await startWeb();
  const file = join(dir, 'tenants.json');
  const keys = {
    hostile: await addTenant(file, 'hostile', [
      '--limit',
      'fileToolTimeoutSeconds=5',
      '--limit',
      'concurrentCalls=10',
      '--network-allow',
      `127.0.0.1:${web.port}`,
    ]),
    slowpoke: await addTenant(file, 'slowpoke', ['--limit', 'fileToolTimeoutSeconds=600', '--limit', 'concurrentCalls=10']),
    quiet: await addTenant(file, 'quiet'),
  };
  const hosting = await startHosting({
    tenantsFile: file,
    dataDir: join(dir, 'data'),
    // Two workers, as on this project's 2-core machines, and the test tools (`slow`) beside the built-ins.
    pool: { threads: 2, toolModules: [testToolModuleUrl] },
    otherPaths: (req) => (req.url === '/healthz' ? healthzHandler : undefined),
  });
  Object.assign(context, { hosting, web, keys });
});

anyTest.after.always(async (t) => {
  const context = t.context as Partial<Context>;
  await context.hosting?.close();
  await context.web?.close();
});

/** Runs `work` and says how long it took (logged, never asserted). */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - started) };
}

const lineNumbers = (text: string) => [...text.matchAll(/^L(\d+):/gm)].map((match) => Number(match[1]));

test('catastrophic regular expressions are matched in linear time, and another tenant is served meanwhile', async (t) => {
  t.timeout(300_000);
  const { hosting, keys } = t.context as Context;
  const hostile = await connectTenant(t, hosting.server.url, keys.hostile);
  const quiet = await connectTenant(t, hosting.server.url, keys.quiet);
  const a44 = 'a'.repeat(44);
  // Under JavaScript's engine the first held a worker 87 s; each of the others is a variation of the same blow-up.
  const content = [`${a44}!`, a44, `${'a'.repeat(5000)}!`, `${'ab'.repeat(3000)}`, `${'x'.repeat(5000)}`].join('\n');
  t.is((await call(hostile.client, 'write_file', { file_path: 'evil.txt', content })).errorType, undefined);
  const attacks: Array<[string, number[]]> = [
    ['^(a|aa)+$', [2]],
    ['^(a+)+$', [2]],
    ['(a|a)+$', [2]],
    ['^(a*)*$', [2]],
    ['(x+x+)+y', []],
    ['(.*a){30}!', [1, 3]],
    ['^(\\w+\\s?)*!$', [1, 3]],
    ['((ab)*)+c', []],
  ];
  const running = attacks.map(([pattern]) => call(hostile.client, 'grep_search', { pattern }));
  const listed = await timed(() => call(quiet.client, 'list_directory', { dir_path: '.' }));
  t.is(listed.value.errorType, undefined, listed.value.text);
  const results = await Promise.all(running);
  attacks.forEach(([pattern, lines], index) => {
    const result = results[index]!;
    t.is(result.errorType, undefined, `${pattern}: ${result.text.slice(0, 300)}`);
    t.deepEqual(lineNumbers(result.text), lines, pattern);
  });
  // What only backtracking could do is refused, with a type the client can act on.
  for (const pattern of ['^(a+)\\1+$', '(?=(a+))\\1*b', '(?<!x)(a|aa)+$']) {
    const refused = await call(hostile.client, 'grep_search', { pattern });
    t.is(refused.errorType, 'unsupported_pattern', pattern);
    t.regex(refused.text, /linear time \(RE2\)/);
  }
  t.log(`quiet's list_directory during ${attacks.length} catastrophic greps: ${listed.ms} ms`);

  // Globs became backtracking JavaScript regexes too (picomatch): a file name of 200 a's and globs that never match it.
  const name = 'a'.repeat(200);
  t.is((await call(hostile.client, 'write_file', { file_path: name, content: 'x\n' })).errorType, undefined);
  const globs = await Promise.all([
    call(hostile.client, 'glob', { pattern: '*a*a*a*a*a*a*a*a*a*a*b' }),
    call(hostile.client, 'grep_search', { pattern: 'x', include_pattern: '?*?*?*?*?*?*?*?*?*?*b' }),
    call(hostile.client, 'list_directory', { dir_path: '.', ignore: ['*a*a*a*a*a*a*a*a*a*a*b'] }),
    call(hostile.client, 'read_many_files', { include: ['*a*a*a*a*a*a*a*a*a*a*b'] }),
  ]);
  for (const result of globs) t.not(result.errorType, 'execution_timeout', result.text.slice(0, 300));
  t.regex(globs[2]!.text, new RegExp(name));
});

test("one tenant's slow file tool calls hold at most its share of the workers: another tenant's list_directory is answered meanwhile", async (t) => {
  t.timeout(300_000);
  const { hosting, keys } = t.context as Context;
  const slowpoke = await connectTenant(t, hosting.server.url, keys.slowpoke);
  const quiet = await connectTenant(t, hosting.server.url, keys.quiet);
  const idle = await timed(() => call(quiet.client, 'list_directory', { dir_path: '.' }));
  const cancel = new AbortController();
  t.teardown(() => cancel.abort());
  let slowEnded = 0;
  // More calls than there are workers, each holding one for ten minutes unless cancelled.
  const slow = [1, 2, 3, 4].map((i) =>
    call(slowpoke.client, 'slow', { ms: 600_000, label: `hold-${i}` }, cancel.signal)
      .catch(() => undefined)
      .finally(() => slowEnded++),
  );
  t.true(await eventually(async () => hosting.server.runningCalls === 4, 60_000, 20), 'the slow calls are admitted');
  const busy = await timed(() => call(quiet.client, 'list_directory', { dir_path: '.' }, AbortSignal.timeout(120_000)));
  t.is(busy.value.errorType, undefined, busy.value.text);
  t.is(slowEnded, 0, "every slow call still holds its worker or its place in the queue when quiet's call is answered");
  t.log(`quiet's list_directory: ${idle.ms} ms idle, ${busy.ms} ms while slowpoke holds its share of the workers with 4 calls`);
  cancel.abort();
  await Promise.all(slow);
});

test('a hostile page is turned into text off the main thread: /healthz and another tenant answer meanwhile; nested divs are flattened', async (t) => {
  t.timeout(300_000);
  const { hosting, keys, web } = t.context as Context;
  const hostile = await connectTenant(t, hosting.server.url, keys.hostile);
  const quiet = await connectTenant(t, hosting.server.url, keys.quiet);
  const healthz = hosting.server.url.replace(/\/mcp$/, '/healthz');
  // First, while hostile's serverCpu is unspent (the slow page below spends it, and a fetch waiting for its
  // share counts against the URL's time limit): the page, 1.5 MB of nested divs (23-25 s of the main
  // thread before), comes back flattened.
  const nested = await timed(() => call(hostile.client, 'web_fetch', { prompt: `Read http://127.0.0.1:${web.port}/nested` }));
  t.is(nested.value.errorType, undefined, nested.value.text.slice(0, 300));
  t.regex(nested.value.text, /HTML tags nested deeper than 256 levels were dropped; their text is kept/);
  t.regex(nested.value.text, /deep text/);
  t.log(`1.5 MB of nested divs: ${nested.ms} ms for the whole web_fetch`);
  // Quiet's container is up before the attack: its command below starts at once.
  t.regex((await call(quiet.client, 'run_shell_command', { command: 'echo warm' })).text, /warm/);
  const idleHealth = await timed(() => fetch(healthz));

  const running = call(quiet.client, 'run_shell_command', { command: 'sleep 2; echo still-running-fine' });
  let hostileAnswered = false;
  const served = web.served('/slow');
  const attack = call(hostile.client, 'web_fetch', { prompt: `Summarize http://127.0.0.1:${web.port}/slow` }).finally(() => (hostileAnswered = true));
  await served;
  // Converting (or, on a server that converts on its main thread, converted and answered).
  t.true(await eventually(async () => sharedHtmlTextPool().running > 0 || hostileAnswered, 120_000, 5), 'the page is being turned into text');
  const health = await timed(() => fetch(healthz));
  t.is(health.value.status, 200);
  const listed = await timed(() => call(quiet.client, 'list_directory', { dir_path: '.' }));
  t.is(listed.value.errorType, undefined, listed.value.text);
  const echo = await timed(() => call(quiet.client, 'run_shell_command', { command: 'echo served' }));
  t.regex(echo.value.text, /served/);
  t.false(hostileAnswered, "the hostile page was still being converted when the other tenant's calls were answered");
  t.regex((await running).text, /still-running-fine/, "the other tenant's running call was not broken");
  const fetched = await attack;
  // Either the page's text, or its refusal at the URL's time limit or at the converter's heap
  // limit (which comes first depends on the machine's speed): never the server stalled.
  t.true(
    fetched.errorType === undefined
      ? /a\s+a/.test(fetched.text)
      : /could not be turned into text within the URL's time limit|the converter ran out of memory/.test(fetched.text),
    fetched.text.slice(0, 300),
  );
  t.log(
    `/healthz ${idleHealth.ms} ms idle, ${health.ms} ms during the conversion; quiet's list_directory ${listed.ms} ms, echo ${echo.ms} ms during it; hostile: ${fetched.errorType ?? 'ok'}`,
  );
});
