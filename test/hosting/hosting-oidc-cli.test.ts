import anyTest, { type TestFn } from 'ava';
import { once } from 'node:events';
import { access, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, connectTenant, hostingFolder, listToolsMessage, post } from '../helpers/hosting.js';
import { printedBy, startCliServer, type CliServer } from '../helpers/hosting-cli.js';
import { startTestIssuer, type TestIssuer } from '../helpers/oidc-issuer.js';

/**
 * The real `toolcell serve --tenants` with --oidc-issuer (an issuer of the
 * test's own on loopback), --public-url and --audience kept apart, and the
 * operator's view of it: what it publishes, what it says on stderr while
 * the issuer fails, and `toolcell hosting sessions` facing a hostile `sub`.
 */
interface Context {
  dir: string;
  tenantsFile: string;
  issuer: TestIssuer;
  server: CliServer;
  adminKeyFile: string;
  /** The admin API's own loopback listener, `http://127.0.0.1:PORT`. */
  adminUrl: string;
  auditFile: string;
}

const test = (await requireDocker(anyTest as TestFn<Context>, 'hosting/oidc-cli')).serial;

const PUBLIC_URL = 'https://tools.example';
const AUDIENCE = 'urn:example:toolcell';
const ADMIN_KEY = 'a'.repeat(48);

anyTest.before(async (t) => {
  const dir = await hostingFolder({ teardown: () => {} }, 'toolcell-hosting-oidc-cli-');
  const tenantsFile = join(dir, 'tenants.json');
  await addTenant(tenantsFile, 'acme');
  // Everything started is stopped at the end even when a later step fails: a server left
  // listening would keep this file's process (and so the whole run) from ever ending.
  const teardowns: Array<() => Promise<void>> = [];
  (t.context as { teardowns?: typeof teardowns }).teardowns = teardowns;
  const issuer = await startTestIssuer(AUDIENCE);
  teardowns.push(() => issuer.close());
  const adminKeyFile = join(dir, 'admin.key');
  await writeFile(adminKeyFile, `${ADMIN_KEY}\n`, { mode: 0o600 });
  const auditFile = join(dir, 'audit.jsonl');
  const server = await startCliServer({ teardown: (fn) => void teardowns.push(fn) }, [
    '--tenants',
    tenantsFile,
    '--data-dir',
    join(dir, 'data'),
    '--oidc-issuer',
    issuer.issuer,
    '--public-url',
    PUBLIC_URL,
    '--audience',
    AUDIENCE,
    '--tenant-claim',
    'org',
    '--admin',
    '0',
    '--admin-key-file',
    adminKeyFile,
    '--audit',
    auditFile,
  ]);
  const adminUrl = await printedBy(server, /admin API \(\/admin\/\) for operators at (http:\/\/127\.0\.0\.1:\d+)/);
  Object.assign(t.context as Context & { teardowns: typeof teardowns }, { dir, tenantsFile, issuer, server, adminKeyFile, adminUrl, auditFile, teardowns });
});

anyTest.after.always(async (t) => {
  const context = t.context as Partial<Context> & { teardowns?: Array<() => Promise<void>> };
  // Last started, first stopped: the server before its issuer.
  for (const teardown of (context.teardowns ?? []).reverse()) await teardown();
});

/**
 * The server's stderr lines holding `text`, once there is one: stderr is
 * another pipe than the HTTP answers, so a line may arrive after the answer
 * that followed it. Rejects after a generous backstop.
 */
async function stderrLines(server: CliServer, text: string): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = server
      .stderr()
      .split('\n')
      .filter((line) => line.includes(text));
    if (lines.length > 0) return lines;
    if (Date.now() > deadline) throw new Error(`no stderr line with ${JSON.stringify(text)} in: ${server.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const origin = (server: CliServer) => server.url.replace(/\/mcp$/, '');
const bearer = (credential: string) => ({ Authorization: `Bearer ${credential}` });

test('while the key set answers 500, tokens are refused as issuer_unreachable, stderr says so once, and again once when it answers', async (t) => {
  const { server, issuer, auditFile } = t.context;
  // First of the serial tests: no token has made the server fetch the keys yet, so the first one finds the outage.
  issuer.failJwks(500);
  // The next tests need the key set back even when this one fails half-way.
  t.teardown(() => issuer.failJwks(undefined));
  const started = Date.now();
  for (let i = 0; i < 20; i++) {
    const response = await post(server.url, listToolsMessage(), bearer(await issuer.sign({ org: 'acme', jti: `t${i}` })));
    t.is(response.status, 401);
  }
  const outage = await stderrLines(server, 'cannot reach the issuer');
  t.is(outage.length, 1, server.stderr());
  t.regex(outage[0]!, /^toolcell serve: OIDC: cannot reach the issuer http:\/\/127\.0\.0\.1:\d+: Cannot read the key set .*\/jwks: HTTP 500/);
  // The first failure is written at once; the 19 like it (same address, same reason) become one
  // count record at the end of the audit log's repeat interval (repeat-records.ts), not 19 lines.
  const audited = (await readFile(auditFile, 'utf8')).split('\n').filter((line) => line.includes('"auth_failure"'));
  t.true(audited.length >= 1 && audited.length < 20, `${audited.length} auth_failure lines for 20 tokens`);
  t.true(
    audited.every((line) => line.includes('"reason":"invalid_token:issuer_unreachable"')),
    audited[0],
  );
  // As many as the backoff (5 s, doubling) allows in the time the 20 took: one, on any machine that is not very slow.
  const allowed = 1 + Math.floor(Math.log2((Date.now() - started) / 5000 + 1));
  t.true(issuer.count('/jwks') <= allowed, `${issuer.count('/jwks')} JWKS fetches for 20 tokens`);

  issuer.failJwks(undefined);
  // The first retry comes after the backoff (5 s); poll until a token passes, with a generous backstop.
  const deadline = Date.now() + 90_000;
  // Past authentication, a request without a session is a 400: the token was taken.
  let status = 401;
  while (status === 401 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    status = (await post(server.url, listToolsMessage(), bearer(await issuer.sign({ org: 'acme' })))).status;
  }
  t.is(status, 400);
  const back = await stderrLines(server, 'answers again');
  t.is(back.length, 1, server.stderr());
});

test('--public-url, not the listen address, is published in the RFC 9728 document and in every 401', async (t) => {
  const { server, issuer } = t.context;
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const response = await fetch(`${origin(server)}${path}`);
    t.is(response.status, 200, path);
    t.deepEqual(await response.json(), { resource: `${PUBLIC_URL}/mcp`, authorization_servers: [issuer.issuer], bearer_methods_supported: ['header'] });
  }
  const unauthenticated = await post(server.url, listToolsMessage());
  t.is(unauthenticated.status, 401);
  t.is(unauthenticated.headers.get('www-authenticate'), `Bearer resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp"`);
  const refused = await post(server.url, listToolsMessage(), bearer(await issuer.sign({ org: 'acme', aud: 'elsewhere' })));
  t.regex(refused.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="https:\/\/tools\.example\/.*", error="invalid_token"$/);
});

test('--audience and --public-url are kept apart: aud must be the audience, and the resource URL is not one', async (t) => {
  const { server, issuer } = t.context;
  const good = await connectTenant(t, server.url, await issuer.sign({ org: 'acme' }));
  t.truthy(good.sessionId);
  for (const aud of [`${PUBLIC_URL}/mcp`, server.url, 'toolcell']) {
    const response = await post(server.url, listToolsMessage(), bearer(await issuer.sign({ org: 'acme', aud })));
    t.is(response.status, 401, aud);
  }
});

test("toolcell hosting sessions prints a token's sub escaped: it can neither erase its row nor draw another", async (t) => {
  const { server, issuer, adminKeyFile, adminUrl } = t.context;
  const forged = `\x1b[2K\x1b[1A\x1b[2K\r00000000-0000-4000-8000-000000000000  beta  key:abcdefabcdef  1s  0  -\n\u202e`;
  const hostile = await connectTenant(t, server.url, await issuer.sign({ org: 'acme', sub: forged }));
  const table = await runCli(['hosting', 'sessions', '--server', adminUrl, '--admin-key-file', adminKeyFile]);
  t.is(table.code, 0, table.stderr);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point.
  t.false(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/.test(table.stdout), JSON.stringify(table.stdout));
  const row = table.stdout.split('\n').find((line) => line.startsWith(hostile.sessionId));
  t.truthy(row, table.stdout);
  t.true(row!.includes('oidc:"\\x1b[2K\\x1b[1A\\x1b[2K\\r00000000-'), row);
  t.false(
    table.stdout.split('\n').some((line) => line.startsWith('00000000-')),
    'no forged row',
  );
  const json = await runCli(['hosting', 'sessions', '--json', '--server', adminUrl, '--admin-key-file', adminKeyFile]);
  t.is(json.code, 0, json.stderr);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point.
  t.false(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/.test(json.stdout));
  const listed = (JSON.parse(json.stdout) as Array<{ id: string; subject: string; via: string }>).find((session) => session.id === hostile.sessionId);
  t.deepEqual(listed && { subject: listed.subject, via: listed.via }, { subject: forged, via: 'oidc' });
});

test('a malformed --audience, --public-url or --oidc-issuer stops the start with an error naming the flag, and changes nothing', async (t) => {
  const { dir, tenantsFile, issuer } = t.context;
  const dataDir = join(dir, 'never-made');
  const base = ['serve', '--http', '127.0.0.1:0', '--tenants', tenantsFile, '--data-dir', dataDir];
  const oidc = (publicUrl: string, audience?: string, issuerUrl = issuer.issuer) => [
    '--oidc-issuer',
    issuerUrl,
    '--public-url',
    publicUrl,
    ...(audience !== undefined ? ['--audience', audience] : []),
  ];
  const cases: Array<[string[], RegExp]> = [
    [oidc(PUBLIC_URL, 'a b:c'), /--audience "a b:c" holds a colon, so it must be a URI/],
    [oidc(PUBLIC_URL, ':toolcell'), /--audience ":toolcell" holds a colon/],
    [oidc(PUBLIC_URL, ''), /--audience "" must not be empty/],
    [oidc(PUBLIC_URL, ' toolcell'), /--audience " toolcell" begins or ends with white space/],
    [oidc('tools.example'), /--public-url "tools\.example" is not an absolute URL/],
    [oidc('ftp://tools.example'), /--public-url "ftp:\/\/tools\.example" must be an https:\/\/ URL/],
    [oidc('http://tools.example'), /--public-url "http:\/\/tools\.example" must be an https:\/\/ URL \(http:\/\/ only for a loopback address\)/],
    [oidc('https://tools.example/mcp'), /--public-url "https:\/\/tools\.example\/mcp" must be the server's address without \/mcp/],
    [oidc('https://user:pw@tools.example'), /--public-url .* must not hold a user name or password/],
    [oidc('https://tools.example/?a=b'), /--public-url .* must not have a query or a fragment/],
    [oidc(PUBLIC_URL, undefined, 'not a url'), /--oidc-issuer "not a url" is not an http\(s\) URL/],
    [['--oidc-issuer', issuer.issuer], /--oidc-issuer needs --public-url URL/],
  ];
  for (const [args, message] of cases) {
    const result = await runCli([...base, ...args]);
    t.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, message, args.join(' '));
  }
  await t.throwsAsync(access(dataDir));
  const plain = await runCli(['serve', '--http', '127.0.0.1:0', '--public-url', PUBLIC_URL]);
  t.is(plain.code, 2);
  t.regex(plain.stderr, /--public-url needs --tenants FILE/);
});

test("an issuer's hostile discovery document cannot drive the operator's terminal: stderr is escaped", async (t) => {
  const { dir, tenantsFile } = t.context;
  // What the document names as its issuer is quoted in the start-up error: here a window title, a line erase and a forged line.
  const hostile = 'x\x1b]0;owned\x07\x1b[2K\r\ntoolcell serve: hosting 1 tenant(s) over MCP Streamable HTTP at http://evil/mcp';
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ issuer: hostile, jwks_uri: 'https://elsewhere.example/jwks' })),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => void server.close());
  const issuerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const result = await runCli([
    'serve',
    '--http',
    '127.0.0.1:0',
    '--tenants',
    tenantsFile,
    '--data-dir',
    join(dir, 'data-hostile'),
    '--oidc-issuer',
    issuerUrl,
    '--public-url',
    PUBLIC_URL,
  ]);
  t.is(result.code, 2, result.stderr);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point.
  t.false(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(result.stderr), JSON.stringify(result.stderr));
  t.true(result.stderr.includes('names the issuer x\\x1b]0;owned\\x07\\x1b[2K\\r\\ntoolcell serve: hosting'), result.stderr);
  t.false(result.stderr.split('\n').some((line) => line.startsWith('toolcell serve: hosting')));
});
