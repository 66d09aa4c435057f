import type { Etcd3, Lease } from 'etcd3';

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
 * refresh. The node registry and the session summary are such records.
 */
export async function keepLeasedRecord(
  etcd: Etcd3,
  options: { key: string; render: () => string; what: string; onLog: (message: string) => void },
): Promise<{ close(): Promise<void> }> {
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
  const put = async () => {
    const text = options.render();
    if (text === last) return;
    await lease.put(options.key).value(text);
    last = text;
  };
  await put();
  const timer = setInterval(() => {
    if (!closed) put().catch((error: Error) => options.onLog(`cluster: cannot write ${options.what}: ${error.message}`));
  }, REFRESH_MS);
  timer.unref();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      // Revoking the lease removes the record at once: readers stop counting this node now, not in 10 s.
      await lease.revoke().catch(() => {});
    },
  };
}
