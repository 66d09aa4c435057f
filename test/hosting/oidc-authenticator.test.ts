import test from 'ava';
import { jwtVerify } from 'jose';
import { OidcAuthenticator, auditReason, type OidcAuthenticatorOptions, type OidcAuthOutcome } from '../../src/hosting/auth/oidc/oidc-authenticator.js';
import { IssuerKeys, IssuerUnreachableError } from '../../src/hosting/auth/oidc/issuer-keys.js';
import { protectedResourceMetadata } from '../../src/hosting/auth/oidc/protected-resource.js';
import { wwwAuthenticate } from '../../src/hosting/auth/oidc/www-authenticate.js';
import { startTestIssuer } from '../helpers/oidc-issuer.js';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

const AUDIENCE = 'https://tools.example/mcp';
const TENANTS = new Set(['alice', 'acme']);

async function setUp(
  t: { teardown(fn: () => Promise<void>): void },
  options: Partial<Pick<OidcAuthenticatorOptions, 'tenantClaim' | 'retryAfterMs' | 'onLog' | 'audience'>> = {},
) {
  const issuer = await startTestIssuer(AUDIENCE);
  t.teardown(() => issuer.close());
  const auth = new OidcAuthenticator({ issuer: issuer.issuer, audience: AUDIENCE, knownTenant: (name) => TENANTS.has(name), ...options });
  return { issuer, auth };
}

function refusal(outcome: OidcAuthOutcome): string {
  return outcome.ok ? 'accepted' : auditReason(outcome);
}

const now = () => Math.floor(Date.now() / 1000);

test('a good token maps its sub to the tenant and the subject', async (t) => {
  const { issuer, auth } = await setUp(t);
  const outcome = await auth.authenticate(await issuer.sign());
  t.deepEqual(outcome, { ok: true, principal: { tenant: 'alice', subject: 'alice', via: 'oidc', issuer: issuer.issuer } });
});

test('tenantClaim maps another claim to the tenant; the subject stays sub', async (t) => {
  const { issuer, auth } = await setUp(t, { tenantClaim: 'org' });
  t.deepEqual(await auth.authenticate(await issuer.sign({ sub: 'user-42', org: 'acme' })), {
    ok: true,
    principal: { tenant: 'acme', subject: 'user-42', via: 'oidc', issuer: issuer.issuer },
  });
  t.is(refusal(await auth.authenticate(await issuer.sign({ sub: 'user-42' }))), 'invalid_token:missing_claim');
});

test('each broken token is refused with its reason', async (t) => {
  const { issuer, auth } = await setUp(t);
  const cases: Array<[string, Promise<string>, string]> = [
    ['wrong aud', issuer.sign({ aud: 'https://other.example/mcp' }), 'invalid_token:wrong_audience'],
    ['wrong iss', issuer.sign({ iss: 'https://evil.example' }), 'invalid_token:wrong_issuer'],
    ['expired', issuer.sign({ iat: now() - 3600, exp: now() - 600 }), 'invalid_token:expired'],
    ['not yet valid', issuer.sign({ nbf: now() + 600 }), 'invalid_token:not_yet_valid'],
    ['bad signature', issuer.sign({}, { key: issuer.otherKey }), 'invalid_token:bad_signature'],
    ['unknown key id', issuer.sign({}, { key: issuer.otherKey, kid: 'key-2' }), 'invalid_token:unknown_signing_key'],
    ['no exp', issuer.sign({ exp: undefined }), 'invalid_token:missing_claim'],
    ['unknown tenant', issuer.sign({ sub: 'mallory' }), 'unknown_tenant'],
  ];
  for (const [name, token, expected] of cases) t.is(refusal(await auth.authenticate(await token)), expected, name);
});

test('alg none is refused', async (t) => {
  const { issuer, auth } = await setUp(t);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const token = `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: issuer.issuer, sub: 'alice', aud: AUDIENCE, exp: now() + 300 })}.`;
  t.true(auth.recognises(token));
  t.is(refusal(await auth.authenticate(token)), 'invalid_token:algorithm_not_allowed');
});

test('a clock a few seconds off is tolerated', async (t) => {
  const { issuer, auth } = await setUp(t);
  t.true((await auth.authenticate(await issuer.sign({ exp: now() - 5 }))).ok);
  t.true((await auth.authenticate(await issuer.sign({ nbf: now() + 5 }))).ok);
});

test('a refreshed token of the same sub maps to the same Principal; discovery happens once', async (t) => {
  const { issuer, auth } = await setUp(t);
  const first = await auth.authenticate(await issuer.sign({ iat: now() - 10, jti: 'one' }));
  const refreshed = await auth.authenticate(await issuer.sign({ iat: now(), exp: now() + 900, jti: 'two' }));
  t.true(first.ok && refreshed.ok);
  t.deepEqual(refreshed, first);
  t.is(issuer.requests.filter((url) => url === '/.well-known/openid-configuration').length, 1);
});

test('what is not a JWT is not recognised, and refused as malformed when given anyway', async (t) => {
  const { auth } = await setUp(t);
  for (const bearer of ['tc_abcdefabcdef_secretsecret', 'abc.def.ghi', 'eyJhbGciOiJSUzI1NiJ9.only-two']) t.false(auth.recognises(bearer), bearer);
  t.is(refusal(await auth.authenticate('not-a-jwt')), 'malformed_credentials:malformed');
});

test('an issuer that does not answer refuses tokens as issuer_unreachable, and fails the start-up check', async (t) => {
  const issuer = await startTestIssuer(AUDIENCE);
  const token = await issuer.sign();
  await issuer.close();
  const auth = new OidcAuthenticator({ issuer: issuer.issuer, audience: AUDIENCE, knownTenant: () => true, timeoutMs: 1000 });
  t.is(refusal(await auth.authenticate(token)), 'invalid_token:issuer_unreachable');
  const error = await t.throwsAsync(auth.discover(), { message: /openid-configuration/ });
  t.is((error as { code?: string }).code, 'oidc_discovery_failed');
});

test('a discovery document naming another issuer is refused with oidc_discovery_failed', async (t) => {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ issuer: 'https://elsewhere', jwks_uri: 'https://elsewhere/jwks' })),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => void server.close());
  const auth = new OidcAuthenticator({ issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, audience: AUDIENCE, knownTenant: () => true });
  const error = await t.throwsAsync(auth.discover());
  t.is((error as { code?: string }).code, 'oidc_discovery_failed');
  t.regex(error!.message, /names the issuer https:\/\/elsewhere/);
});

test('protected-resource metadata is served at the path-aware and the root well-known paths', async (t) => {
  const metadata = protectedResourceMetadata({ resource: AUDIENCE, authorizationServers: ['https://id.example'] });
  t.deepEqual(metadata.paths, ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']);
  t.is(metadata.url, 'https://tools.example/.well-known/oauth-protected-resource/mcp');
  const server = createServer((req, res) => void (metadata.paths.includes(req.url ?? '') ? metadata.handler(req, res) : res.writeHead(404).end()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => void server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const path of metadata.paths) {
    const response = await fetch(`${base}${path}`);
    t.is(response.status, 200);
    t.deepEqual(await response.json(), { resource: AUDIENCE, authorization_servers: ['https://id.example'], bearer_methods_supported: ['header'] });
  }
});

test('wwwAuthenticate points at the metadata, and names invalid_token only for a presented credential', (t) => {
  const url = 'https://tools.example/.well-known/oauth-protected-resource/mcp';
  t.is(wwwAuthenticate({ resourceMetadata: url, reason: 'missing_credentials' }), `Bearer resource_metadata="${url}"`);
  t.is(wwwAuthenticate({ resourceMetadata: url, reason: 'invalid_token' }), `Bearer resource_metadata="${url}", error="invalid_token"`);
  t.is(wwwAuthenticate({ reason: 'unknown_key' }), 'Bearer error="invalid_token"');
  t.is(wwwAuthenticate(), 'Bearer');
  t.is(wwwAuthenticate({ resourceMetadata: 'https://x/"a\\b' }), 'Bearer resource_metadata="https://x/\\"a\\\\b"');
});

/**
 * The most fetches of the key set a backoff starting at `retryAfterMs` and
 * doubling allows in `elapsedMs`: the k-th attempt comes no earlier than
 * retryAfterMs·(2^(k-1) − 1) after the first.
 */
function allowedAttempts(elapsedMs: number, retryAfterMs = 5000): number {
  return 1 + Math.floor(Math.log2(elapsedMs / retryAfterMs + 1));
}

test('while the JWKS endpoint answers 500, 300 tokens with unknown kids one after another make a bounded number of fetches', async (t) => {
  const { issuer, auth } = await setUp(t);
  issuer.failJwks(500);
  const started = Date.now();
  for (let i = 0; i < 300; i++) {
    const outcome = await auth.authenticate(await issuer.sign({}, { key: issuer.otherKey, kid: `bogus-${i}` }));
    t.is(refusal(outcome), 'invalid_token:issuer_unreachable');
  }
  const fetches = issuer.count('/jwks');
  t.true(fetches >= 1 && fetches <= allowedAttempts(Date.now() - started), `${fetches} JWKS fetches`);
  t.is(issuer.count('/.well-known/openid-configuration'), 1);
});

test('300 tokens at once against a failing JWKS endpoint share one fetch', async (t) => {
  const { issuer, auth } = await setUp(t);
  issuer.failJwks(503);
  const tokens = await Promise.all(Array.from({ length: 300 }, (_, i) => issuer.sign({}, { key: issuer.otherKey, kid: `bogus-${i}` })));
  const started = Date.now();
  const outcomes = await Promise.all(tokens.map((token) => auth.authenticate(token)));
  t.true(outcomes.every((outcome) => refusal(outcome) === 'invalid_token:issuer_unreachable'));
  const fetches = issuer.count('/jwks');
  t.true(fetches >= 1 && fetches <= allowedAttempts(Date.now() - started), `${fetches} JWKS fetches`);
});

test('with a healthy issuer, 300 tokens with unknown kids make no fetch within the cooldown, and good tokens pass', async (t) => {
  const { issuer, auth } = await setUp(t);
  t.true((await auth.authenticate(await issuer.sign())).ok);
  const before = issuer.count('/jwks');
  for (let i = 0; i < 300; i++) {
    t.is(refusal(await auth.authenticate(await issuer.sign({}, { key: issuer.otherKey, kid: `bogus-${i}` }))), 'invalid_token:unknown_signing_key');
  }
  t.is(issuer.count('/jwks'), before);
  t.true((await auth.authenticate(await issuer.sign())).ok);
});

test('keys in hand keep verifying tokens while the JWKS endpoint fails', async (t) => {
  const { issuer, auth } = await setUp(t);
  t.true((await auth.authenticate(await issuer.sign())).ok);
  issuer.failJwks(500);
  t.true((await auth.authenticate(await issuer.sign({ jti: 'later' }))).ok);
});

test('an issuer outage is logged once when it starts and once when it ends, never per token, and never with a token', async (t) => {
  const lines: string[] = [];
  const { issuer, auth } = await setUp(t, { retryAfterMs: 50, onLog: (line) => lines.push(line) });
  issuer.failJwks(500);
  const tokens: string[] = [];
  for (let i = 0; i < 100; i++) {
    const token = await issuer.sign({ jti: `t${i}` });
    tokens.push(token);
    t.is(refusal(await auth.authenticate(token)), 'invalid_token:issuer_unreachable');
  }
  t.is(lines.length, 1, lines.join('\n'));
  t.regex(lines[0]!, /^OIDC: cannot reach the issuer http:\/\/127\.0\.0\.1:\d+: Cannot read the key set .*\/jwks: HTTP 500/);
  issuer.failJwks(undefined);
  // The backoff (50 ms, doubling) passes; a generous backstop only.
  const deadline = Date.now() + 60_000;
  let outcome = await auth.authenticate(await issuer.sign());
  while (!outcome.ok && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    outcome = await auth.authenticate(await issuer.sign());
  }
  t.true(outcome.ok);
  t.is(lines.length, 2, lines.join('\n'));
  t.regex(lines[1]!, /^OIDC: the issuer http:\/\/127\.0\.0\.1:\d+ answers again \(after \d+ failed attempt\(s\) over \d+ s\)$/);
  for (const line of lines) for (const token of tokens) t.false(line.includes(token));
});

test('an audience is any string, and a URI when it holds a colon (RFC 7519 StringOrURI)', async (t) => {
  for (const audience of ['toolcell', 'urn:example:toolcell', 'https://tools.example/mcp', 'api://toolcell']) {
    const { issuer, auth } = await setUp(t, { audience });
    t.true((await auth.authenticate(await issuer.sign({ aud: audience }))).ok, audience);
    t.is(refusal(await auth.authenticate(await issuer.sign({ aud: 'https://tools.example/mcp-other' }))), 'invalid_token:wrong_audience', audience);
  }
  for (const audience of ['', ' toolcell', 'tool\ncell', 'a b:c', ':nothing', 'http://[::1']) {
    t.throws(
      () => new OidcAuthenticator({ issuer: 'https://id.example', audience, knownTenant: () => true }),
      { message: /options\.audience/ },
      JSON.stringify(audience),
    );
  }
});

test('while the discovery document answers 500, 300 tokens make a bounded number of requests', async (t) => {
  const { issuer, auth } = await setUp(t);
  issuer.failDiscovery(500);
  const started = Date.now();
  for (let i = 0; i < 300; i++) t.is(refusal(await auth.authenticate(await issuer.sign({ jti: `t${i}` }))), 'invalid_token:issuer_unreachable');
  const requests = issuer.count('/.well-known/openid-configuration');
  t.true(requests >= 1 && requests <= allowedAttempts(Date.now() - started), `${requests} discovery requests`);
  t.is(issuer.count('/jwks'), 0);
});

test('past the cooldown, unknown kids against a failing JWKS endpoint are bounded by the backoff too', async (t) => {
  const issuer = await startTestIssuer(AUDIENCE);
  t.teardown(() => issuer.close());
  // No cooldown: every unknown kid may ask for the keys again, as after 30 s on a real server.
  const keys = new IssuerKeys({ issuer: issuer.issuer, timeoutMs: 5000, cooldownMs: 0 });
  const verify = (token: string) => jwtVerify(token, keys.getKey, { issuer: issuer.issuer, audience: AUDIENCE });
  await verify(await issuer.sign());
  t.is(issuer.count('/jwks'), 1);
  issuer.failJwks(500);
  const started = Date.now();
  for (let i = 0; i < 300; i++) {
    await t.throwsAsync(verify(await issuer.sign({}, { key: issuer.otherKey, kid: `bogus-${i}` })), { instanceOf: IssuerUnreachableError });
  }
  const refetches = issuer.count('/jwks') - 1;
  t.true(refetches >= 1 && refetches <= allowedAttempts(Date.now() - started), `${refetches} JWKS refetches`);
  // The key in hand still verifies.
  await t.notThrowsAsync(verify(await issuer.sign({ jti: 'good' })));
});
