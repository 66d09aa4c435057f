import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorMessage } from '../../errors.js';
import { loadCluster, type ClusterMembership } from '../../hosting/index.js';
import { EXIT_FAILURE, EXIT_USAGE } from '../exit-codes.js';
import { etcdConnectionFrom, type EtcdCliOptions } from './cluster-options.js';

interface ClusterNodeFlags extends EtcdCliOptions {
  tenants: string;
  nodeName?: string;
  nodeUrl?: string;
  tlsCert?: string;
  tlsKey?: string;
}

/**
 * `toolcell serve --tenants FILE --etcd …`: joins the cluster before the
 * server starts (the tenants file is written from etcd). Undefined without
 * --etcd; an exit code when the flags are wrong or etcd cannot be read.
 */
export async function joinClusterFromFlags(
  options: ClusterNodeFlags,
  say: (message: string) => void,
): Promise<{ node: string; membership: ClusterMembership } | undefined | number> {
  const etcd = etcdConnectionFrom(options);
  if (etcd === undefined) {
    if (options.nodeName !== undefined || options.nodeUrl !== undefined)
      return usage(say, '--node-name and --node-url need --etcd URLS (one node of a cluster)');
    return undefined;
  }
  if (typeof etcd === 'string') return usage(say, etcd);
  if (options.nodeName === undefined || options.nodeUrl === undefined) return usage(say, '--etcd needs --node-name NAME and --node-url https://ADDRESS:PORT');
  if (options.tlsCert === undefined || options.tlsKey === undefined)
    return usage(say, '--etcd needs --tls-cert and --tls-key: the front and the other nodes reach this server over TLS only');
  let serverName: string;
  try {
    // Every server of a cluster carries one name (deploy/swarm/certs): the one this server's own certificate names first.
    const names = new X509Certificate(readFileSync(options.tlsCert)).subjectAltName?.split(', ').filter((name) => name.startsWith('DNS:'));
    if (names === undefined || names.length === 0)
      return usage(say, `--tls-cert ${options.tlsCert} names no DNS name (subjectAltName), which the other nodes would check`);
    serverName = names[0]!.slice('DNS:'.length);
  } catch (error) {
    return usage(say, `--tls-cert ${options.tlsCert}: ${errorMessage(error)}`);
  }
  const { joinCluster } = await loadCluster();
  try {
    const membership = await joinCluster({
      node: options.nodeName,
      url: options.nodeUrl,
      tenantsFile: resolve(options.tenants),
      etcd,
      serverTls: { caFile: etcd.caFile, serverName, certFile: options.tlsCert, keyFile: options.tlsKey },
      onLog: say,
    });
    say(`node ${options.nodeName} of the cluster at ${etcd.endpoints.join(', ')}`);
    return { node: options.nodeName, membership };
  } catch (error) {
    say(errorMessage(error));
    return error instanceof TypeError || error instanceof RangeError ? EXIT_USAGE : EXIT_FAILURE;
  }
}

function usage(say: (message: string) => void, message: string): number {
  say(message);
  return EXIT_USAGE;
}
