/**
 * A time limit as an AbortSignal: `signal` aborts when `parent` does or when
 * `ms` have passed, whichever comes first, and `expired` says which.
 *
 * Why not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on Node 20
 * the timeout signal inside `any` is held only weakly, so a garbage
 * collection before it fires drops it and the limit never ends the work
 * (nodejs/node#57736; measured here: a gc() 50 ms into a 200 ms limit, and it
 * never fired). A plain timer holds its controller strongly. Dispose the
 * deadline when the work is done, so the timer and the parent's listener go.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  /** True once the time ran out (not when the parent aborted first). */
  readonly expired: boolean;
  /** Clears the timer and the listener on the parent; the signal stays as it is. */
  dispose(): void;
}

export function deadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  let expired = false;
  const onParentAbort = (): void => controller.abort(parent?.reason);
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DOMException(`The operation timed out after ${ms} ms`, 'TimeoutError'));
  }, ms);
  const dispose = (): void => {
    clearTimeout(timer);
    parent?.removeEventListener('abort', onParentAbort);
  };
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  controller.signal.addEventListener('abort', dispose, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    dispose,
  };
}
