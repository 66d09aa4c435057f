import anyTest, { type TestFn } from 'ava';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { apiKeyId } from '../../src/hosting/auth/api-key.js';
import { AuditLog } from '../../src/hosting/audit/audit-log.js';
import { combineObservers } from '../../src/hosting/operations/combine-observers.js';
import { HostingMetrics } from '../../src/hosting/metrics/hosting-metrics.js';
import { OidcAuthenticator } from '../../src/hosting/auth/oidc/oidc-authenticator.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, listToolsMessage, post, startHosting, type Hosting } from '../helpers/hosting.js';
import { startTestIssuer, type TestIssuer } from '../helpers/oidc-issuer.js';

/**
 * A hosting server that takes both API keys and the tokens of an issuer of
 * its own on loopback (`org` names the tenant, as with --tenant-claim org),
 * attacked as issue 27 did: a token standing for a key, and the reverse;
 * broken tokens whose reasons must reach the audit log and the metrics.
 */
interface Context {
  hosting: Hosting;
  issuer: TestIssuer;
  key: string;
  keyId: string;
  auditFile: string;
  metrics: HostingMetrics;
}

const test = (await requireDocker(anyTest as TestFn<Context>, 'hosting/oidc')).serial;

/** The audience is a plain name, not a URL (RFC 7519 allows any string). */
const AUDIENCE = 'toolcell';

anyTest.before(async (t) => {
  const dir = await hostingFolder({ teardown: () => {} }, 'toolcell-hosting-oidc-');
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'acme');
  await addTenant(file, 'beta');
  const issuer = await startTestIssuer(AUDIENCE);
  const auditFile = join(dir, 'audit.jsonl');
  const audit = await AuditLog.open({ path: auditFile });
  const metrics = new HostingMetrics({ processMetrics: false });
  const hosting = await startHosting({
    tenantsFile: file,
    dataDir: join(dir, 'data'),
    observer: combineObservers(audit, metrics),
    moreAuthenticators: (store) => [
      new OidcAuthenticator({ issuer: issuer.issuer, audience: AUDIENCE, tenantClaim: 'org', knownTenant: (name) => store.tenant(name) !== undefined }),
    ],
  });
  Object.assign(t.context as Context, { hosting, issuer, key, keyId: apiKeyId(key)!, auditFile, metrics });
  // Closed at the end (after.always), with the server.
  (t.context as Context & { audit: AuditLog }).audit = audit;
});

anyTest.after.always(async (t) => {
  const context = t.context as Partial<Context> & { audit?: AuditLog };
  await context.hosting?.close();
  await context.audit?.close();
  await context.issuer?.close();
});

/** A tools/call of read_file, as a client without the SDK sends it. */
function readFileMessage(path: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id: `read-${randomUUID()}`, method: 'tools/call', params: { name: 'read_file', arguments: { file_path: path } } };
}

const bearer = (credential: string) => ({ Authorization: `Bearer ${credential}` });

test("a session opened with acme's key is not continued by a token whose sub is that key's id", async (t) => {
  const { hosting, issuer, key, keyId } = t.context;
  const owner = await connectTenant(t, hosting.server.url, key);
  t.is((await call(owner.client, 'write_file', { file_path: 'secret.txt', content: 'key-holder-secret' })).errorType, undefined);
  // A valid token of acme's, whose issuer handed out the key's public id as a sub.
  const token = await issuer.sign({ org: 'acme', sub: keyId });
  const asToken = await post(hosting.server.url, readFileMessage('secret.txt'), { ...bearer(token), 'Mcp-Session-Id': owner.sessionId });
  const unknown = await post(hosting.server.url, readFileMessage('secret.txt'), { ...bearer(token), 'Mcp-Session-Id': randomUUID() });
  const body = await asToken.text();
  t.is(asToken.status, 404);
  t.is(unknown.status, 404);
  t.is(body, await unknown.text());
  t.false(body.includes('key-holder-secret'));
  // Nor can it end the session or open its event stream.
  const headers = { ...bearer(token), 'Mcp-Session-Id': owner.sessionId, Accept: 'text/event-stream' };
  const deleted = await fetch(hosting.server.url, { method: 'DELETE', headers });
  t.is(deleted.status, 404);
  t.is(await deleted.text(), body);
  const stream = await fetch(hosting.server.url, { method: 'GET', headers });
  t.is(stream.status, 404);
  t.is(await stream.text(), body);
  // The key that opened it still reaches it: the refusal is the binding, not a broken session.
  const asKey = await post(hosting.server.url, readFileMessage('secret.txt'), { ...bearer(key), 'Mcp-Session-Id': owner.sessionId });
  t.is(asKey.status, 200);
  t.true((await asKey.text()).includes('key-holder-secret'));
});

test("a session opened with a token whose sub is acme's key id is not continued by that key; a refreshed token continues it", async (t) => {
  const { hosting, issuer, key, keyId } = t.context;
  const token = await issuer.sign({ org: 'acme', sub: keyId, jti: 'first' });
  const owner = await connectTenant(t, hosting.server.url, token);
  const asKey = await post(hosting.server.url, listToolsMessage(), { ...bearer(key), 'Mcp-Session-Id': owner.sessionId });
  const unknown = await post(hosting.server.url, listToolsMessage(), { ...bearer(key), 'Mcp-Session-Id': randomUUID() });
  t.is(asKey.status, 404);
  t.is(await asKey.text(), await unknown.text());
  const now = Math.floor(Date.now() / 1000);
  const refreshed = await issuer.sign({ org: 'acme', sub: keyId, jti: 'second', iat: now, exp: now + 900 });
  const asRefreshed = await post(hosting.server.url, listToolsMessage(), { ...bearer(refreshed), 'Mcp-Session-Id': owner.sessionId });
  t.is(asRefreshed.status, 200);
  // Another user of the same tenant is not its owner either.
  const colleague = await issuer.sign({ org: 'acme', sub: 'someone-else' });
  t.is((await post(hosting.server.url, listToolsMessage(), { ...bearer(colleague), 'Mcp-Session-Id': owner.sessionId })).status, 404);
});

test('the audit log and the metrics say why each token failed, with the same label; the client gets one 401 for all', async (t) => {
  const { hosting, issuer, auditFile, metrics } = t.context;
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const cases: Array<[string, string]> = [
    [await issuer.sign({ org: 'acme', iat: now - 3600, exp: now - 600 }), 'invalid_token:expired'],
    [await issuer.sign({ org: 'acme', nbf: now + 3600 }), 'invalid_token:not_yet_valid'],
    // The listen address as the audience, which the server published before --public-url and --audience were apart.
    [await issuer.sign({ org: 'acme', aud: hosting.server.url }), 'invalid_token:wrong_audience'],
    [await issuer.sign({ org: 'acme', iss: 'https://evil.example' }), 'invalid_token:wrong_issuer'],
    [await issuer.sign({ org: 'acme' }, { key: issuer.otherKey }), 'invalid_token:bad_signature'],
    [await issuer.sign({ org: 'acme' }, { key: issuer.otherKey, kid: 'key-2' }), 'invalid_token:unknown_signing_key'],
    [
      `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: issuer.issuer, sub: 'x', org: 'acme', aud: AUDIENCE, exp: now + 300 })}.`,
      'invalid_token:algorithm_not_allowed',
    ],
    [await issuer.sign({}), 'invalid_token:missing_claim'],
    [await issuer.sign({ org: 'nobody' }), 'unknown_tenant'],
  ];
  const before = (await readFile(auditFile, 'utf8')).split('\n').filter(Boolean).length;
  const replies = new Set<string>();
  for (const [token] of cases) {
    const response = await post(hosting.server.url, listToolsMessage(), bearer(token));
    t.is(response.status, 401);
    replies.add(`${response.headers.get('www-authenticate')} ${await response.text()}`);
  }
  t.is(replies.size, 1, [...replies].join('\n'));
  const text = await readFile(auditFile, 'utf8');
  const failures = text
    .split('\n')
    .filter(Boolean)
    .slice(before)
    .map((line) => JSON.parse(line) as { event: string; reason: string })
    .filter((line) => line.event === 'auth_failure');
  t.deepEqual(
    failures.map((line) => line.reason),
    cases.map(([, reason]) => reason),
  );
  for (const [token] of cases) t.false(text.includes(token), 'no token in the audit log');
  const exposition = (await metrics.text()).body;
  for (const [, reason] of cases) t.regex(exposition, new RegExp(`toolcell_auth_failures_total\\{reason="${reason}"\\} 1\\b`), reason);
});
