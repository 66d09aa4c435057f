import { readFileSync } from 'node:fs';
import { Etcd3 } from 'etcd3';
import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';
import { errorMessage, ToolcellError, ToolErrorType } from '../../errors.js';
import type { ReadinessCheck } from '../health/health-handlers.js';

/**
 * How a toolcell server or command reaches the cluster's etcd (the shared
 * state of a cluster: tenants, keys as hashes, placement, the nodes serving).
 * TLS with a client certificate: the link crosses machines, and nothing in
 * the network under it is trusted (deploy/swarm/DESIGN.md).
 */
export const etcdConnectionSchema = z.strictObject({
  /** The members' client URLs, `https://HOST:2379`; any one answering serves. */
  endpoints: z
    .array(z.url({ protocol: /^https$/, error: 'must be an https:// URL (etcd is reached with TLS only)' }))
    .min(1, { error: 'must name at least one etcd member' }),
  /** The CA that signed the members' certificates (PEM file). */
  caFile: z.string().min(1),
  /** This client's certificate and key (PEM files): the members check them. */
  certFile: z.string().min(1),
  keyFile: z.string().min(1),
  /** The name the members' certificates must carry; default the endpoint's host. In a Swarm made by deploy/swarm: `etcd`. */
  serverName: z.string().min(1).optional(),
});

export type EtcdConnectionOptions = z.input<typeof etcdConnectionSchema>;

/** A client of the cluster's etcd (the npm package etcd3, gRPC); `close()` it when done. */
export function connectEtcd(raw: EtcdConnectionOptions): Etcd3 {
  const options = parseOptions(etcdConnectionSchema, raw, 'connectEtcd');
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new ToolcellError(ToolErrorType.INVALID_INPUT, `Cannot read the etcd ${what} ${file}: ${errorMessage(error)}`, { cause: error });
    }
  };
  return new Etcd3({
    hosts: options.endpoints,
    credentials: { rootCertificate: read(options.caFile, 'CA'), certChain: read(options.certFile, 'certificate'), privateKey: read(options.keyFile, 'key') },
    ...(options.serverName !== undefined
      ? { grpcOptions: { 'grpc.ssl_target_name_override': options.serverName, 'grpc.default_authority': options.serverName } }
      : {}),
    // A member lost: the next one is tried at once; the library's own retry policy bounds the rest.
    dialTimeout: 5_000,
    // No unary call waits forever on a cluster that lost its quorum; watches are streams and stay open.
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + 10_000 }),
  });
}

/** How long a readiness read of etcd may take before the node counts as cut off from it. */
const REACHABLE_WITHIN_MS = 1_500;

/**
 * /readyz's part in a cluster: ready while a linearizable read of `key`
 * answers within 1.5 s (the read needs the members' quorum, so a node cut
 * off from it, or a cluster without one, is not ready). A node that cannot
 * reach the shared state would serve stale tenants and keys, and could not
 * learn of a revocation: the front then sends it no new session, while its
 * sessions' requests (liveness) are still served. Never throws.
 */
export function etcdReadiness(etcd: Etcd3, key: string): ReadinessCheck {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${REACHABLE_WITHIN_MS} ms`)), REACHABLE_WITHIN_MS);
    });
    try {
      const read = etcd
        .get(key)
        .options({ deadline: Date.now() + REACHABLE_WITHIN_MS })
        .exists();
      await Promise.race([read, late]);
      return { ready: true, checks: { cluster: { ok: true, detail: 'etcd answers' } } };
    } catch (error) {
      return { ready: false, checks: { cluster: { ok: false, detail: `etcd out of reach: ${errorMessage(error)}` } } };
    } finally {
      clearTimeout(timer);
    }
  };
}
