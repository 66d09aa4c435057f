import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGeminiClient } from '../../../src/agent/gemini-client.js';
import { webFetchSummarizer } from '../../../src/agent/web-fetch-summary.js';
import { extractUrls } from '../../../src/tools/web/prompt-urls.js';
import { WebFetchTool, type WebFetchParams, type WebFetchToolOptions } from '../../../src/tools/web/web-fetch-tool.js';
import type { ToolResult } from '../../../src/tools/tool.js';
import type { EgressEvent } from '../../../src/egress/egress-event.js';
import { HtmlTextPool, type HtmlToText } from '../../../src/tools/web/html-text-pool.js';
import { eventually } from '../../helpers/docker.js';
import { startFakeGemini, textTurn } from '../../helpers/fake-gemini.js';

// A site on loopback: loopback is private, so the tool reaches it only by
// the names and ports listed below (with 127.0.0.1 listed for that port).
let site: Server;
let port: number;
let internal: Server;
let internalPort: number;
let internalHits = 0;

test.before(async () => {
  site = createServer((req, res) => {
    if (req.url === '/article')
      return void res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          '<html><head><style>p{}</style><script>steal()</script></head><body><h1>Title</h1><p>First <b>point</b>.</p><img src="x.png"><a href="/more">more</a></body></html>',
        );
    if (req.url === '/plain') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('just text');
    if (req.url === '/big') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(300_000));
    if (req.url === '/image') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    if (req.url === '/hang') return; // never answers
    // Shallow, so not flattened: seconds of html-to-text's time.
    if (req.url === '/slow-html') return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<ul>${'<li>a'.repeat(1_000_000)}</ul>`);
    if (req.url === '/nested') return void res.writeHead(200, { 'content-type': 'text/html' }).end(`${'<div>'.repeat(50_000)}deep${'</div>'.repeat(50_000)}`);
    if (req.url === '/to-internal') return void res.writeHead(302, { location: `http://internal.test:${internalPort}/secret` }).end();
    if (req.url === '/to-loopback-ip') return void res.writeHead(301, { location: `http://127.0.0.1:${internalPort}/secret` }).end();
    if (req.url === '/to-plain') return void res.writeHead(302, { location: '/plain' }).end();
    res.writeHead(404).end();
  });
  internal = createServer((_req, res) => {
    internalHits += 1;
    res.writeHead(200).end('metadata secret');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  port = (site.address() as AddressInfo).port;
  internalPort = (internal.address() as AddressInfo).port;
});
test.after.always(() => {
  site?.closeAllConnections();
  site?.close();
  internal?.close();
});

function tool(options: Partial<WebFetchToolOptions> = {}): WebFetchTool {
  return new WebFetchTool({
    allow: [`site.test:${port}`, `127.0.0.1:${port}`, `internal.test:${internalPort}`],
    hosts: { 'site.test': '127.0.0.1', 'internal.test': '127.0.0.1', 'unlisted.test': '127.0.0.1' },
    ...options,
  });
}

function params(web: WebFetchTool, prompt: string): WebFetchParams {
  const checked = web.validateParams({ prompt });
  if (!checked.ok) throw new Error(checked.error);
  return checked.params;
}

async function fetchPrompt(web: WebFetchTool, prompt: string): Promise<ToolResult & { text: string }> {
  const result = await web.execute(params(web, prompt), new AbortController().signal);
  return { ...result, text: String(result.llmContent) };
}

test('URLs are taken from the prompt: punctuation dropped, duplicates once, GitHub blob pages as raw files', (t) => {
  t.deepEqual(extractUrls('Summarize https://example.com/a, then (https://example.com/b). Again https://example.com/a!'), [
    'https://example.com/a',
    'https://example.com/b',
  ]);
  t.deepEqual(extractUrls('Read https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/web-fetch.md'), [
    'https://raw.githubusercontent.com/google-gemini/gemini-cli/main/docs/tools/web-fetch.md',
  ]);
  t.deepEqual(extractUrls('ftp://example.com and file:///etc/passwd are not web URLs'), []);
});

test('a prompt needs 1 to 20 URLs; other params are refused', (t) => {
  const web = tool();
  t.like(web.validateParams({ prompt: 'no links here' }), {
    ok: false,
    error: 'params/prompt: must contain at least one URL starting with http:// or https://',
  });
  const many = Array.from({ length: 21 }, (_, i) => `https://example.com/${i}`).join(' ');
  t.like(web.validateParams({ prompt: many }), { ok: false, error: 'params/prompt: holds 21 URLs; at most 20 can be fetched at once' });
  t.false(web.validateParams({ prompt: 'https://example.com', url: 'x' }).ok);
  t.false(web.validateParams({ prompt: 7 }).ok);
});

test('it asks first with an info confirmation listing the URLs', async (t) => {
  const web = tool();
  t.is(web.kind, 'fetch');
  t.deepEqual(await web.shouldConfirmExecute(params(web, `Summarize http://site.test:${port}/article and http://site.test:${port}/plain`)), {
    type: 'info',
    title: 'Confirm Web Fetch',
    prompt: `Summarize http://site.test:${port}/article and http://site.test:${port}/plain`,
    urls: [`http://site.test:${port}/article`, `http://site.test:${port}/plain`],
  });
});

test('HTML becomes text (no scripts, styles or images) and the result lists its sources', async (t) => {
  const result = await fetchPrompt(tool(), `Summarize http://site.test:${port}/article and http://site.test:${port}/to-plain`);
  t.is(result.error, undefined);
  t.regex(result.text, /TITLE/);
  t.regex(result.text, /First point\./);
  t.notRegex(result.text, /steal|p\{\}|x\.png/);
  t.regex(result.text, /just text/);
  t.regex(
    result.text,
    new RegExp(
      `Sources:\\n\\[1\\] http://site\\.test:${port}/article\\n\\[2\\] http://site\\.test:${port}/to-plain \\(redirected to http://site\\.test:${port}/plain\\)`,
    ),
  );
  t.is(result.returnDisplay, 'Fetched 2 of 2 URLs');
});

test('hosts outside sandbox.network.allow are refused, and with no network at all the error says how to allow one', async (t) => {
  const refused = await fetchPrompt(tool(), `Read http://unlisted.test:${port}/plain`);
  t.is(refused.error?.type, 'web_fetch_failed');
  t.regex(refused.error?.message ?? '', /refused unlisted\.test:\d+, not in sandbox\.network\.allow/);
  const closed = await fetchPrompt(tool({ allow: [] }), `Read http://site.test:${port}/plain`);
  t.regex(closed.error?.message ?? '', /sandbox\.network is "none"/);
});

test('SSRF: a redirect to an internal name or a loopback address is refused at that hop, and the internal server is never reached', async (t) => {
  const before = internalHits;
  const viaName = await fetchPrompt(tool(), `Read http://site.test:${port}/to-internal`);
  t.regex(viaName.error?.message ?? '', /refused internal\.test:\d+ \(redirected from .*\), resolves only to non-public 127\.0\.0\.1 \(loopback\)/);
  const viaIp = await fetchPrompt(tool(), `Read http://site.test:${port}/to-loopback-ip`);
  t.regex(viaIp.error?.message ?? '', /refused 127\.0\.0\.1:\d+ \(redirected from .*\), IP address not in sandbox\.network\.allow/);
  const direct = await fetchPrompt(tool(), `Read http://169.254.169.254/latest/meta-data/ and http://[::1]:${internalPort}/`);
  t.is(direct.error?.type, 'web_fetch_failed');
  t.is(internalHits, before);
});

test('every connection, allowed or refused, each redirect hop included, is reported as an egress event', async (t) => {
  const events: EgressEvent[] = [];
  const web = tool({ onEgress: (event) => events.push(event) });
  await fetchPrompt(web, `Read http://site.test:${port}/to-plain http://site.test:${port}/to-internal http://unlisted.test:${port}/plain`);
  const seen = events.map((event) => `${event.action} ${event.host}:${event.port}`).sort();
  t.deepEqual(seen, [
    `allowed site.test:${port}`,
    `allowed site.test:${port}`,
    `allowed site.test:${port}`,
    `refused internal.test:${internalPort}`,
    `refused unlisted.test:${port}`,
  ]);
  t.true(events.every((event) => event.via === 'web_fetch' && event.client === 'host' && typeof event.time === 'string'));
  t.like(
    events.find((event) => event.host === 'internal.test'),
    { action: 'refused', reason: `resolves only to non-public 127.0.0.1 (loopback), not listed in sandbox.network.allow` },
  );
  t.like(
    events.find((event) => event.action === 'allowed'),
    { address: '127.0.0.1', entry: `site.test:${port}` },
  );
  // With no network at all, the refusals are reported too.
  const none: EgressEvent[] = [];
  await fetchPrompt(tool({ allow: [], onEgress: (event) => none.push(event) }), `Read http://site.test:${port}/plain`);
  t.like(none, [{ action: 'refused', host: 'site.test', via: 'web_fetch', reason: 'not in sandbox.network.allow' }]);
});

test('bounded: a long page is cut and binary content is not returned; partial success keeps what worked', async (t) => {
  const result = await fetchPrompt(tool({ limits: { maxBytes: 200_000 } }), `Read http://site.test:${port}/big http://site.test:${port}/image`);
  t.is(result.error, undefined);
  t.regex(result.text, /the page was cut here/);
  t.true(result.text.length < 110_000);
  t.regex(result.text, /Not fetched:\n.*\/image: content type image\/png is not text/);
  t.is(result.returnDisplay, 'Fetched 1 of 2 URLs (1 failed)');
});

test('bounded: a server that never answers ends at the time limit', async (t) => {
  // The server holds the request forever, so the limit is what ends it however slow the machine is.
  const result = await fetchPrompt(tool({ limits: { timeoutMs: 300 } }), `Read http://site.test:${port}/hang`);
  t.is(result.error?.type, 'web_fetch_failed');
  t.regex(result.error?.message ?? '', /\/hang: no answer within 0\.3 s/);
});

test('with a model configured, the prompt is answered from the pages through the real Gemini client', async (t) => {
  const fake = await startFakeGemini(textTurn('The article makes one point [1].'));
  t.teardown(() => fake.close());
  const client = createGeminiClient({ apiKey: 'test-key', baseUrl: fake.url });
  const web = tool({ summarize: webFetchSummarizer({ client: client.models, model: 'gemini-2.5-flash' }) });
  const result = await fetchPrompt(web, `What is the point of http://site.test:${port}/article?`);
  t.regex(result.text, /^The article makes one point \[1\]\.\n\nSources:\n\[1\] http:\/\/site\.test:\d+\/article$/);
  const sent = JSON.stringify(fake.requests[0]?.body.contents);
  t.regex(sent, /What is the point of/);
  t.regex(sent, /First point\./);
  t.is(result.returnDisplay, 'Fetched 1 of 1 URL, answered through the model');
});

test("the URL's time limit covers turning its page into text: a conversion still running then is ended and the page refused, saying so", async (t) => {
  // A converter that runs until it is told to stop, so the limit surely falls in the conversion
  // (the real threads' ending is the next test's and html-text.test.ts's).
  let stopped: unknown;
  const endless: HtmlToText = (_html, { signal }) =>
    new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject((stopped = signal.reason)), { once: true }));
  const web = tool({ htmlToText: endless, limits: { timeoutMs: 5_000 } });
  const result = await fetchPrompt(web, `Read http://site.test:${port}/article`);
  t.is(result.error?.type, 'web_fetch_failed');
  t.regex(result.text, /could not be turned into text within the URL's time limit of 5 s/);
  t.is((stopped as Error).name, 'TimeoutError');
});

test('a cancelled call ends the conversion of its page', async (t) => {
  const pool = new HtmlTextPool({ threads: 1 });
  t.teardown(() => pool.close());
  const web = tool({ htmlToText: pool.convert });
  await pool.convert('<p>warm</p>', { signal: new AbortController().signal });
  const controller = new AbortController();
  const running = web.execute(params(web, `Read http://site.test:${port}/slow-html`), controller.signal);
  const [converter] = pool.pids;
  t.true(await eventually(async () => pool.running === 1, 30_000, 5));
  controller.abort();
  t.is(((await running.catch((error: unknown) => error)) as Error).name, 'AbortError');
  t.is(pool.running, 0);
  t.true(await eventually(async () => !pool.pids.includes(converter!), 30_000, 5), 'the process converting it was killed');
});

test('a page nested deeper than the cap comes back flattened, and the model is told', async (t) => {
  const result = await fetchPrompt(tool(), `Read http://site.test:${port}/nested`);
  t.is(result.error, undefined);
  t.regex(result.text, /49744 HTML tags nested deeper than 256 levels were dropped; their text is kept/);
  t.regex(result.text, /deep/);
});
