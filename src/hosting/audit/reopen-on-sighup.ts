/** What `reopenOnSighup` needs: anything that can open its file again. */
export interface Reopenable {
  reopen(): Promise<void>;
}

/**
 * Reopens `log` on every SIGHUP, the signal logrotate's `postrotate` (or
 * `kill -HUP`) sends after renaming the file away. A failed reopen keeps
 * the old descriptor and is reported through `onError`; it never takes the
 * server down. Returns a function that removes the handler.
 *
 * Installing it also means SIGHUP no longer ends the process (Node's
 * default), which is what a long-running server wants.
 */
export function reopenOnSighup(log: Reopenable, onError: (error: unknown) => void = () => {}): () => void {
  const handler = (): void => {
    log.reopen().catch(onError);
  };
  process.on('SIGHUP', handler);
  return () => {
    process.off('SIGHUP', handler);
  };
}
