import type { Etcd3, Lease } from 'etcd3';

export interface LeasedRecord {
  /** Writes the record now if `render()` gives another value; resolves once written (a failure is logged, not thrown). */
  refresh(): Promise<void>;
  /** Stops refreshing and removes the record. */
  close(): Promise<void>;
}

/** A record's lease: it outlives a node that stops answering by this long. */
const LEASE_SECONDS = 10;
/** How often the record is made again and written if it changed. */
const REFRESH_MS = 3_000;

/**
 * Keeps one etcd key alive under a lease of its own while this node serves:
 * written at once, then again whenever `render()` gives another value (looked
 * at every 3 s), gone 10 s after the node is, and at once on `close()`
 * (revoking the lease). A lease lost (etcd unreachable past its 10 s) is dead
 * for good: a new one is taken and the record written under it at the next
 * refresh. `refresh()` writes it now (when it changed) instead of at the
 * next look; writes are one at a time, so an older value never lands after
 * a newer one. The node registry, the session summary and the tenants a
 * node has applied are such records.
 */
export async function keepLeasedRecord(
  etcd: Etcd3,
  options: { key: string; render: () => string; what: string; onLog: (message: string) => void },
): Promise<LeasedRecord> {
  let closed = false;
  let last = '';
  const newLease = (): Lease => {
    const made = etcd.lease(LEASE_SECONDS, { autoKeepAlive: true });
    made.on('lost', (error) => {
      if (closed || lease !== made) return;
      options.onLog(`cluster: ${options.what} lapsed (${error.message}); writing it again`);
      lease = newLease();
      last = '';
    });
    return made;
  };
  let lease = newLease();
  let writing = Promise.resolve();
  const put = (): Promise<void> => {
    const next = writing.then(async () => {
      const text = options.render();
      if (closed || text === last) return;
      await lease.put(options.key).value(text);
      last = text;
    });
    writing = next.catch(() => {});
    return next;
  };
  await put();
  const refresh = () => put().catch((error: Error) => options.onLog(`cluster: cannot write ${options.what}: ${error.message}`));
  const timer = setInterval(() => void refresh(), REFRESH_MS);
  timer.unref();
  return {
    refresh,
    async close() {
      closed = true;
      clearInterval(timer);
      // Revoking the lease removes the record at once: readers stop counting this node now, not in 10 s.
      await lease.revoke().catch(() => {});
    },
  };
}
