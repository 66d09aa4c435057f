import type { HostingEvent, HostingObserver } from './hosting-events.js';

/** An observer whose `record` always returns a promise. */
export interface AwaitedObserver extends HostingObserver {
  record(event: HostingEvent): Promise<void>;
}

/**
 * One observer that hands each event to several (the audit log, the
 * metrics, a log line). `record` resolves when every one has; a failing
 * observer (the audit log could not write) rejects it, after the others
 * have still seen the event, so a counted event is never skipped because
 * another observer failed.
 */
export function combineObservers(...observers: HostingObserver[]): AwaitedObserver {
  return {
    async record(event: HostingEvent): Promise<void> {
      const results = await Promise.allSettled(observers.map(async (observer) => observer.record(event)));
      const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}
