import type { Etcd3, Watcher } from 'etcd3';
import { errorMessage } from '../../errors.js';
import { writeTenantsFile } from '../tenants/tenants-file.js';
import { CLUSTER_TENANTS_KEY, parseClusterTenants, readClusterTenants, type ClusterTenants } from './cluster-tenants.js';

export interface TenantsMirror {
  /** The cluster's tenants as last written here (placement included). */
  current(): ClusterTenants;
  /** The etcd revision of the tenants last written to the file. */
  written(): bigint;
  close(): Promise<void>;
}

/**
 * Keeps a node's tenants file a copy of the cluster's (cluster-tenants.ts):
 * written once before the server starts, then again on every change an etcd
 * watch brings (milliseconds after the put, measured in deploy/swarm/DESIGN.md),
 * and read again whole whenever the watch (re)connects, so nothing missed
 * while etcd was out of reach stays missed. The hosting server's tenants
 * store then applies it as it does an operator's edit on one host: a revoked
 * key refused, its sessions closed. `onWritten` runs after each write, with
 * the revision written (the server reloads its store then, without waiting
 * for the file watch, and reports the revision in force: tenants-applied.ts).
 * A bad document is logged and the last good copy kept.
 */
export async function mirrorClusterTenants(
  etcd: Etcd3,
  file: string,
  events: { onWritten?: (revision: bigint) => void; onLog: (message: string) => void },
): Promise<TenantsMirror> {
  const first = await readClusterTenants(etcd);
  await writeTenantsFile(file, first.doc.tenants);
  let current = first.doc;
  let newest = BigInt(first.revision);
  let written = newest;
  let queue = Promise.resolve();
  const apply = (doc: ClusterTenants, revision: bigint) => {
    queue = queue.then(async () => {
      if (revision < newest) return;
      newest = revision;
      try {
        await writeTenantsFile(file, doc.tenants);
        current = doc;
        written = revision;
        events.onWritten?.(revision);
      } catch (error) {
        events.onLog(`cluster: keeping the tenants as they were: ${errorMessage(error)}`);
      }
    });
  };
  const watcher: Watcher = await etcd.watch().key(CLUSTER_TENANTS_KEY).create();
  watcher.on('put', (kv) => {
    try {
      apply(parseClusterTenants(kv.value.toString('utf8'), `etcd ${CLUSTER_TENANTS_KEY}`), BigInt(kv.mod_revision));
    } catch (error) {
      events.onLog(`cluster: keeping the tenants as they were: ${errorMessage(error)}`);
    }
  });
  watcher.on('connected', () => {
    readClusterTenants(etcd).then(
      ({ doc, revision }) => apply(doc, BigInt(revision)),
      (error: unknown) => events.onLog(`cluster: cannot read the tenants: ${errorMessage(error)}`),
    );
  });
  watcher.on('disconnected', () => events.onLog('cluster: lost the watch on the tenants; reconnecting'));
  watcher.on('error', (error) => events.onLog(`cluster: watch on the tenants: ${error.message}`));
  return {
    current: () => current,
    written: () => written,
    async close() {
      await watcher.cancel().catch(() => {});
      await queue;
    },
  };
}
