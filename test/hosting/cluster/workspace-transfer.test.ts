/**
 * A moving workspace crosses between nodes only to a node of the cluster:
 * the old node's TLS port asks for a client certificate and serves the disk
 * image only to one the cluster's CA signed for the servers' name. Attacks
 * first: no certificate, a self-signed one with the right name, one of the
 * CA for another name (an etcd member's). Then the new node's side: the
 * bytes are checked against the size and SHA-256 recorded, not trusted.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchWorkspace, measureFile, serveWorkspace, TRANSFER_PATH_PREFIX, type NodeTls } from '../../../src/hosting/cluster/workspace-transfer.js';
import { packageRoot } from '../../../src/paths.js';
import { hasOpenssl, makeSelfSignedCertificate } from '../../helpers/tls.js';

const MOVE_ID = 'ab'.repeat(12);

interface Fixture {
  dir: string;
  tls: NodeTls;
  image: string;
  url: string;
  server: Server;
  /** What the image is served as (bytes, to compare with the recorded size). */
  served: { bytes: number };
}

async function fixture(t: { teardown(fn: () => void | Promise<void>): void }): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-transfer-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('bash', [join(packageRoot, 'deploy', 'swarm', 'certs', 'make-certs.sh'), join(dir, 'certs'), 'etcd1'], { stdio: 'ignore' });
  const file = (name: string) => readFileSync(join(dir, 'certs', name));
  const tls: NodeTls = { ca: file('ca.pem'), serverName: 'toolcell-server', cert: file('toolcell-server.pem'), key: file('toolcell-server-key.pem') };
  // A disk image's shape: a little data, then a long run of zeros.
  const image = join(dir, 'image.ext4');
  const content = Buffer.concat([Buffer.from('superblock and files\n'.repeat(1000)), Buffer.alloc(8 << 20), Buffer.from('tail')]);
  writeFileSync(image, content);
  const served = { bytes: content.length };
  const server = createServer({ cert: tls.cert, key: tls.key, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    void serveWorkspace(req, res, { tls, find: (id) => (id === MOVE_ID ? { path: image, bytes: served.bytes } : undefined) });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => void server.close());
  return { dir, tls, image, url: `https://127.0.0.1:${(server.address() as { port: number }).port}`, server, served };
}

function get(url: string, tls: NodeTls, client?: { cert: Buffer; key: Buffer }): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const target = new URL(`${TRANSFER_PATH_PREFIX}${MOVE_ID}`, url);
    const outgoing = request(
      { host: target.hostname, port: target.port, path: target.pathname, ca: tls.ca, servername: tls.serverName, ...(client ?? {}) },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

if (!hasOpenssl()) {
  test('workspace transfer: openssl is required', (t) => {
    if (process.env['CI'] === 'true') t.fail('openssl is missing');
    else t.pass();
  });
} else {
  test('the workspace is refused to a client without a certificate of the cluster for the servers', async (t) => {
    const f = await fixture(t);
    t.is((await get(f.url, f.tls)).status, 403, 'no client certificate');
    const selfCert = join(f.dir, 'self.pem');
    const selfKey = join(f.dir, 'self-key.pem');
    makeSelfSignedCertificate(selfCert, selfKey, 'toolcell-server');
    const self = { cert: readFileSync(selfCert), key: readFileSync(selfKey) };
    t.is((await get(f.url, f.tls, self)).status, 403, 'a self-signed certificate naming toolcell-server');
    const member = { cert: readFileSync(join(f.dir, 'certs', 'etcd1.pem')), key: readFileSync(join(f.dir, 'certs', 'etcd1-key.pem')) };
    t.is((await get(f.url, f.tls, member)).status, 403, "a certificate of the cluster's CA for another name (an etcd member)");
    const node = await get(f.url, f.tls, { cert: f.tls.cert, key: f.tls.key });
    t.is(node.status, 200, 'a node of the cluster');
    t.true(node.body.equals(readFileSync(f.image)));
  });

  test('the new node keeps the workspace only with the recorded size and SHA-256, and keeps its zeros as holes', async (t) => {
    const f = await fixture(t);
    const expected = await measureFile(f.image);
    const into = join(f.dir, 'incoming');
    await fetchWorkspace({ url: f.url, id: MOVE_ID, tls: f.tls, into, expected });
    t.true(readFileSync(into).equals(readFileSync(f.image)));
    t.true(statSync(into).blocks * 512 < 1 << 20, 'the 8 MiB of zeros are holes, not blocks');

    await t.throwsAsync(fetchWorkspace({ url: f.url, id: MOVE_ID, tls: f.tls, into, expected: { ...expected, sha256: 'f'.repeat(64) } }), {
      message: /SHA-256 is [a-f0-9]{64}, not the f+ recorded/,
    });
    await t.throwsAsync(fetchWorkspace({ url: f.url, id: MOVE_ID, tls: f.tls, into, expected: { ...expected, bytes: expected.bytes - 1 } }), {
      message: /longer than the \d+ bytes recorded/,
    });
    // The file changed on the old node after it was measured: the bytes no longer match what etcd holds.
    writeFileSync(f.image, Buffer.alloc(expected.bytes, 1));
    await t.throwsAsync(fetchWorkspace({ url: f.url, id: MOVE_ID, tls: f.tls, into, expected }), { message: /SHA-256/ });
  });
}
