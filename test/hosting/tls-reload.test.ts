import test, { type ExecutionContext } from 'ava';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { openHostingOperations } from '../../src/cli/commands/hosting-operations.js';
import { sendJson } from '../../src/hosting/http/request-handler.js';
import { TenantStore } from '../../src/hosting/tenant-store.js';
import { emptyTenantsFile, writeTenantsFile } from '../../src/hosting/tenants-file.js';
import { hasOpenssl, makeSelfSignedCertificate } from '../helpers/tls.js';

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

/** `toolcell serve`'s operations with --tls-cert/--tls-key, their listener on a free port, serving the certificate "first". */
async function serveTls(t: ExecutionContext): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-tls-reload-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  makeSelfSignedCertificate(certFile, keyFile, 'first');
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
  const operations = await openHostingOperations({ tlsCert: certFile, tlsKey: keyFile, publicUrl: 'https://127.0.0.1:0' }, store, say);
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
