import { createHash, X509Certificate } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { pipeline } from 'node:stream/promises';

/**
 * A tenant's workspace (its disk image) carried from one node to another
 * during a move (tenant-moves.ts): the new node asks the old one for it on
 * the old node's own TLS port, each side proving itself with a certificate
 * of the cluster's CA (the same CA and certificates as forwarding). Nothing
 * else may fetch it: no certificate of that CA naming the servers' name, no
 * workspace. The bytes are checked against the size and SHA-256 the old node
 * recorded in etcd, not against anything the answer itself says.
 */
export const TRANSFER_PATH_PREFIX = '/_toolcell/cluster/v1/moves/';

/** The cluster's TLS material as a node holds it. */
export interface NodeTls {
  ca: Buffer;
  /** The name every server's certificate carries (deploy/swarm: toolcell-server). */
  serverName: string;
  cert: Buffer;
  key: Buffer;
}

/** Size and SHA-256 of a file, read once. */
export async function measureFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Whether the request came over TLS with a client certificate the cluster's
 * CA signed, valid now, naming the servers' name. The TLS handshake already
 * proved the client holds that certificate's key (the listener asks for one
 * without requiring it, so MCP clients without one still connect); this is
 * the chain check the listener leaves to its handlers.
 */
export function fromClusterNode(req: IncomingMessage, tls: Pick<NodeTls, 'ca' | 'serverName'>, now = new Date()): boolean {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function') return false;
  const raw = socket.getPeerCertificate(false)?.raw;
  if (!raw || raw.length === 0) return false;
  try {
    const leaf = new X509Certificate(raw);
    const ca = new X509Certificate(tls.ca);
    return (
      leaf.checkIssued(ca) &&
      leaf.verify(ca.publicKey) &&
      new Date(leaf.validFrom) <= now &&
      now <= new Date(leaf.validTo) &&
      leaf.checkHost(tls.serverName, { subject: 'never' }) !== undefined
    );
  } catch {
    return false;
  }
}

/** The old node's answer to `GET …/moves/<id>`: the file, when `find(id)` names one and the caller is a node of the cluster. */
export async function serveWorkspace(
  req: IncomingMessage,
  res: ServerResponse,
  input: { tls: NodeTls; find(id: string): { path: string; bytes: number } | undefined },
): Promise<void> {
  const refuse = (status: number, error: string) =>
    void res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify({ error }));
  if (!fromClusterNode(req, input.tls)) return refuse(403, 'forbidden');
  if (req.method !== 'GET') return refuse(405, 'method_not_allowed');
  const id = (req.url ?? '').slice(TRANSFER_PATH_PREFIX.length).split('?')[0]!;
  const found = /^[a-f0-9]{16,64}$/.test(id) ? input.find(id) : undefined;
  if (found === undefined) return refuse(404, 'no_such_move');
  const size = await stat(found.path).then(
    (stats) => stats.size,
    () => -1,
  );
  if (size !== found.bytes) return refuse(409, 'workspace_changed');
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size), 'Cache-Control': 'no-store' });
  await pipeline(createReadStream(found.path, { highWaterMark: 1 << 20 }), res).catch(() => res.destroy());
}

/**
 * Fetches move `id`'s workspace from the old node at `url` into `into`
 * (created 0600, replaced if there), keeping runs of zeros as holes (a disk
 * image is mostly empty), and checks it: exactly `expected.bytes`, with
 * `expected.sha256`. Synced to disk before it resolves. Throws, leaving a
 * partial file for the caller to remove, when anything differs.
 */
export async function fetchWorkspace(input: {
  url: string;
  id: string;
  tls: NodeTls;
  into: string;
  expected: { bytes: number; sha256: string };
}): Promise<void> {
  const target = new URL(`${TRANSFER_PATH_PREFIX}${input.id}`, input.url);
  const answer = await new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'GET',
        ca: input.tls.ca,
        servername: input.tls.serverName,
        cert: input.tls.cert,
        key: input.tls.key,
        timeout: 30_000,
      },
      resolve,
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('timed out')));
    outgoing.on('error', reject);
    outgoing.end();
  });
  if (answer.statusCode !== 200) {
    answer.resume();
    // 404: the old node has not seen the move reach this phase yet (each node's watch brings it in its own time).
    throw new Error(
      answer.statusCode === 404 ? 'the old node does not offer the workspace yet' : `the old node answered ${answer.statusCode} to the workspace's fetch`,
    );
  }
  const file = await open(input.into, 'w', 0o600);
  const hash = createHash('sha256');
  let position = 0;
  try {
    const zeros = Buffer.alloc(1 << 20);
    for await (const chunk of answer as AsyncIterable<Buffer>) {
      hash.update(chunk);
      if (position + chunk.length > input.expected.bytes) throw new Error(`the workspace is longer than the ${input.expected.bytes} bytes recorded`);
      // A chunk of zeros stays a hole: a 1 GiB image holding 1 MiB of files takes about 1 MiB here too.
      const allZero = chunk.length <= zeros.length && chunk.equals(zeros.subarray(0, chunk.length));
      if (!allZero) await file.write(chunk, 0, chunk.length, position);
      position += chunk.length;
    }
    if (position !== input.expected.bytes) throw new Error(`the workspace came with ${position} bytes, not the ${input.expected.bytes} recorded`);
    const sha256 = hash.digest('hex');
    if (sha256 !== input.expected.sha256) throw new Error(`the workspace's SHA-256 is ${sha256}, not the ${input.expected.sha256} recorded`);
    await file.truncate(position);
    await file.sync();
  } finally {
    await file.close();
  }
}
