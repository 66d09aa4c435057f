import test, { type ExecutionContext } from 'ava';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { openHostingOperations } from '../../src/hosting/operations/hosting-operations.js';
import { sendJson } from '../../src/hosting/http/request-handler.js';
import { TenantStore } from '../../src/hosting/tenants/tenant-store.js';
import { emptyTenantsFile, writeTenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { parsePublicUrl } from '../../src/hosting/auth/oidc/resource-identifiers.js';
import { hasOpenssl, makeCertificate, makeSelfSignedCertificate, type CertificateOptions } from '../helpers/tls.js';

const tlsTest = hasOpenssl() || process.env['CI'] === 'true' ? test.serial : test.skip;
if (!hasOpenssl() && process.env['CI'] !== 'true') console.warn('tls-reload: tests skipped: openssl is not installed');

/** The CN of the certificate the server presents to a new connection. */
function servedName(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    // A new connection each time (no agent): a reused one would keep the certificate it was opened with.
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/healthz', agent: false, rejectUnauthorized: false }, (res) => {
      const name = (res.socket as TLSSocket).getPeerCertificate().subject?.CN;
      res.resume();
      res.on('end', () => resolve(String(name)));
    });
    req.on('error', reject);
    req.end();
  });
}

interface Served {
  port: number;
  certFile: string;
  keyFile: string;
  dir: string;
  /** Resolves with the next line the operations say that matches. */
  nextSaid(pattern: RegExp): Promise<string>;
}

/**
 * `toolcell serve`'s operations with --tls-cert/--tls-key (and --public-url
 * when given), their listener on a free port, serving the certificate "first"
 * (for localhost and 127.0.0.1, or `altNames`).
 */
async function serveTls(t: ExecutionContext, options: { publicUrl?: string; altNames?: string } = {}): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-tls-reload-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  makeCertificate(certFile, keyFile, {
    name: 'first',
    notBefore: hoursFromNow(-1),
    notAfter: hoursFromNow(24),
    ...(options.altNames ? { altNames: options.altNames } : {}),
  });
  const tenants = join(dir, 'tenants.json');
  await writeTenantsFile(tenants, emptyTenantsFile());
  const store = await TenantStore.open({ file: tenants });
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  const say = (line: string) => {
    for (const waiter of [...waiters]) {
      if (!waiter.pattern.test(line)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(line);
    }
  };
  const publicUrl = options.publicUrl !== undefined ? { publicUrl: parsePublicUrl(options.publicUrl, '--public-url') } : {};
  const operations = await openHostingOperations({ tlsCert: certFile, tlsKey: keyFile, ...publicUrl }, store, say);
  const server = operations.serverOptions.createListener!((_req, res) => sendJson(res, 200, { ok: true })) as Server;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(async () => {
    server.closeAllConnections();
    server.close();
    await operations.close();
    store.close();
  });
  return {
    port: (server.address() as AddressInfo).port,
    certFile,
    keyFile,
    dir,
    nextSaid: (pattern) => new Promise((resolve) => waiters.push({ pattern, resolve })),
  };
}

function hoursFromNow(hours: number): Date {
  return new Date(Date.now() + hours * 3600_000);
}

tlsTest('SIGHUP makes toolcell serve present the new certificate and key to new connections', async (t) => {
  const served = await serveTls(t);
  t.is(await servedName(served.port), 'first');
  makeSelfSignedCertificate(served.certFile, served.keyFile, 'second');
  const reloaded = served.nextSaid(/^TLS: reloaded/);
  process.kill(process.pid, 'SIGHUP');
  t.regex(await reloaded, /cert\.pem/);
  t.is(await servedName(served.port), 'second');
});

tlsTest('a certificate that cannot be read, or a key that is not its pair, is logged on SIGHUP and the old certificate keeps serving', async (t) => {
  const served = await serveTls(t);
  t.is(await servedName(served.port), 'first');
  const oldKey = await readFile(served.keyFile);
  await rm(served.certFile);
  const missing = served.nextSaid(/^TLS: keeping/);
  process.kill(process.pid, 'SIGHUP');
  t.regex(await missing, /Cannot read the TLS certificate .*cert\.pem/);
  t.is(await servedName(served.port), 'first');

  // A whole new pair, then the old key put back: the certificate is readable but the key is not its own.
  makeSelfSignedCertificate(served.certFile, join(served.dir, 'other-key.pem'), 'second');
  await writeFile(served.keyFile, oldKey);
  const mismatched = served.nextSaid(/^TLS: keeping/);
  process.kill(process.pid, 'SIGHUP');
  t.regex(await mismatched, /do not make a pair/);
  t.is(await servedName(served.port), 'first');
});

/** Writes a new pair over the served one, sends SIGHUP and resolves with what the server said. */
async function reloadWith(served: Served, certificate: CertificateOptions): Promise<string> {
  makeCertificate(served.certFile, served.keyFile, certificate);
  const said = served.nextSaid(/^TLS: (keeping|reloaded)/);
  process.kill(process.pid, 'SIGHUP');
  return said;
}

tlsTest('an expired certificate, or one not valid yet, is refused on SIGHUP saying why, and the old one keeps serving', async (t) => {
  const served = await serveTls(t);
  t.is(await servedName(served.port), 'first');
  const expired = await reloadWith(served, { name: 'expired', notBefore: hoursFromNow(-48), notAfter: hoursFromNow(-24) });
  t.regex(expired, /^TLS: keeping the certificate served so far: The TLS certificate .*cert\.pem expired at \d{4}-\d\d-\d\dT/);
  t.is(await servedName(served.port), 'first');
  const early = await reloadWith(served, { name: 'early', notBefore: hoursFromNow(24), notAfter: hoursFromNow(48) });
  t.regex(early, /^TLS: keeping the certificate served so far: The TLS certificate .*cert\.pem is not valid yet: from \d{4}-/);
  t.is(await servedName(served.port), 'first');
  // A pair that is valid now is taken.
  t.regex(await reloadWith(served, { name: 'second', notBefore: hoursFromNow(-1), notAfter: hoursFromNow(24) }), /^TLS: reloaded .*cert\.pem \(CN=second; /);
  t.is(await servedName(served.port), 'second');
});

tlsTest('with --public-url, a certificate that does not name its host is refused on SIGHUP, and one that does is taken', async (t) => {
  const served = await serveTls(t, { publicUrl: 'https://mcp.tools.example', altNames: 'DNS:mcp.tools.example,IP:127.0.0.1' });
  t.is(await servedName(served.port), 'first');
  const valid = { notBefore: hoursFromNow(-1), notAfter: hoursFromNow(24) };
  for (const [name, altNames] of [
    ['other', 'DNS:other.example,IP:127.0.0.1'],
    ['deeper', 'DNS:www.mcp.tools.example'],
    ['suffix', 'DNS:mcp.tools.example.evil'],
    // The name in the CN only: clients read the subjectAltName.
    ['mcp.tools.example', 'DNS:localhost'],
  ] as const) {
    const said = await reloadWith(served, { name, altNames, ...valid });
    t.regex(
      said,
      /^TLS: keeping the certificate served so far: The TLS certificate .*cert\.pem does not name mcp\.tools\.example, the server's public host/,
      name,
    );
    t.is(await servedName(served.port), 'first', name);
  }
  t.regex(await reloadWith(served, { name: 'wildcard', altNames: 'DNS:*.tools.example', ...valid }), /^TLS: reloaded/);
  t.is(await servedName(served.port), 'wildcard');
  t.regex(await reloadWith(served, { name: 'second', altNames: 'DNS:mcp.tools.example', ...valid }), /^TLS: reloaded/);
  t.is(await servedName(served.port), 'second');
});

tlsTest('at start, a pair that cannot serve stops the start, saying why', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-tls-start-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const tenants = join(dir, 'tenants.json');
  await writeTenantsFile(tenants, emptyTenantsFile());
  const store = await TenantStore.open({ file: tenants });
  t.teardown(() => store.close());
  const cases: Array<[CertificateOptions, string | undefined, RegExp]> = [
    [{ name: 'expired', notBefore: hoursFromNow(-48), notAfter: hoursFromNow(-24) }, undefined, /expired at/],
    [{ name: 'early', notBefore: hoursFromNow(24), notAfter: hoursFromNow(48) }, undefined, /is not valid yet/],
    [
      { name: 'other', altNames: 'DNS:other.example', notBefore: hoursFromNow(-1), notAfter: hoursFromNow(24) },
      'https://tools.example',
      /does not name tools\.example/,
    ],
  ];
  for (const [certificate, publicUrl, reason] of cases) {
    makeCertificate(certFile, keyFile, certificate);
    const flags = {
      tlsCert: certFile,
      tlsKey: keyFile,
      audit: join(dir, 'audit.jsonl'),
      ...(publicUrl ? { publicUrl: parsePublicUrl(publicUrl, '--public-url') } : {}),
    };
    const error = await t.throwsAsync(
      openHostingOperations(flags, store, () => {}),
      { message: reason },
      certificate.name,
    );
    t.is((error as { code?: string }).code, 'invalid_input');
  }
});
