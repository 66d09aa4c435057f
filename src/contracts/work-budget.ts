/**
 * What the work a shared thread does for one caller is charged to: a hosting
 * tenant's share of the server's CPU (src/hosting/admission/server-cpu.ts).
 * The worker pool and the policy's parse threads ask `admit` before they
 * start a caller's work and `charge` what it cost once it ends, so that a
 * tenant whose regular expressions or long commands keep those threads busy
 * waits for its own share instead of taking the machine's CPU from everyone.
 */
export interface WorkBudget {
  /** Resolves once the caller may start more work; rejects with the signal's reason when it aborts first. */
  admit(signal?: AbortSignal): Promise<void>;
  /** CPU time, in ms, that a piece of the caller's work took on a shared thread. */
  charge(cpuMs: number): void;
}
