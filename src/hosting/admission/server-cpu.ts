import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkBudget } from '../../contracts/work-budget.js';

/** A full bucket holds this many seconds of a tenant's rate: work that comes in bursts (one large search now and then) never waits. */
export const SERVER_CPU_BURST_SECONDS = 4;

/** The longest a waiting call sleeps before it looks at its tenant's account again. */
const LOOK_AGAIN_MS = 1_000;

/** What one tenant has had of the server's threads, for metrics. */
export interface ServerCpuUsage {
  tenant: string;
  /** CPU seconds the server's threads spent on the tenant's work. */
  cpuSeconds: number;
  /** Seconds the tenant's calls waited for their share before their work started (summed over calls). */
  waitedSeconds: number;
}

interface Account {
  /** CPU ms the tenant may still use before it waits; below zero, its debt. */
  balanceMs: number;
  /** When the balance was last brought up to date (performance.now()). */
  at: number;
  cpuMs: number;
  waitedMs: number;
}

export interface ServerCpuLedgerOptions {
  /** Each tenant's share, in CPUs (`serverCpu`), read whenever it is needed: a changed tenants file applies at once. */
  rateOf(tenant: string): number;
  /** The clock, in ms (tests). Default performance.now. */
  now?: () => number;
}

/**
 * Each tenant's share of the CPU the server's own threads spend on it. The
 * worker pool (file tools: a tenant's regular expressions and globs), the
 * policy's parse threads (its long commands) and web_fetch's HTML
 * converters (its pages) are shared by every tenant; what they spend on one
 * tenant's calls is that tenant's, as the CPU of its sandboxes is, and is
 * charged to it here. Work cannot be pre-empted once it runs, so it is
 * charged when it ends (the thread's or converter's own CPU time,
 * workers/thread-cpu.ts) and a tenant in debt waits before its next piece
 * of such work starts, until its debt is paid at its rate.
 *
 * One token bucket of CPU ms per tenant: it fills at `serverCpu` CPU
 * seconds per second up to SERVER_CPU_BURST_SECONDS of that, so a tenant's
 * occasional large search runs at once, and a tenant that keeps the threads
 * busy gets its rate and no more, however many calls it sends. Without this,
 * a server that runs faster only serves a flooding tenant faster: the
 * threads it keeps busy take the host's CPU from every sandbox, the other
 * tenants' included (docs/benchmarks.md#noisy-neighbour).
 */
export class ServerCpuLedger {
  readonly #accounts = new Map<string, Account>();
  readonly #rateOf: (tenant: string) => number;
  readonly #now: () => number;
  #waiting = 0;

  constructor(options: ServerCpuLedgerOptions) {
    this.#rateOf = options.rateOf;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The budget a tenant's work is charged to (the same account however many are made). */
  budgetFor(tenant: string): WorkBudget {
    return { admit: (signal) => this.#admit(tenant, signal), charge: (cpuMs) => this.#charge(tenant, cpuMs) };
  }

  /** Calls waiting for their tenant's share now, all tenants together. */
  get waiting(): number {
    return this.#waiting;
  }

  /** What each tenant has had so far. */
  usage(): ServerCpuUsage[] {
    return [...this.#accounts].map(([tenant, account]) => ({ tenant, cpuSeconds: account.cpuMs / 1000, waitedSeconds: account.waitedMs / 1000 }));
  }

  /** A removed tenant's account goes (its figures with it). */
  forget(tenant: string): void {
    this.#accounts.delete(tenant);
  }

  #account(tenant: string): Account {
    const rate = this.#rate(tenant);
    const now = this.#now();
    let account = this.#accounts.get(tenant);
    // No finite rate: nothing to wait for, the work is only counted.
    const full = Number.isFinite(rate) ? rate * SERVER_CPU_BURST_SECONDS * 1000 : 0;
    if (!account) {
      account = { balanceMs: full, at: now, cpuMs: 0, waitedMs: 0 };
      this.#accounts.set(tenant, account);
    }
    // Refilled at the rate for the time since; a full bucket stays full (a smaller rate shrinks it).
    account.balanceMs = Number.isFinite(rate) ? Math.min(account.balanceMs + (now - account.at) * rate, full) : 0;
    account.at = now;
    return account;
  }

  #rate(tenant: string): number {
    const rate = this.#rateOf(tenant);
    // A tenant removed meanwhile (no rate) is not held up here: its calls are refused where it is looked up.
    return Number.isFinite(rate) && rate > 0 ? rate : Number.POSITIVE_INFINITY;
  }

  #charge(tenant: string, cpuMs: number): void {
    if (!(cpuMs > 0) || !Number.isFinite(cpuMs)) return;
    const account = this.#account(tenant);
    account.balanceMs -= cpuMs;
    account.cpuMs += cpuMs;
  }

  async #admit(tenant: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const started = this.#now();
    let waited = false;
    try {
      for (;;) {
        const account = this.#account(tenant);
        if (account.balanceMs >= 0) return;
        if (!waited) {
          waited = true;
          this.#waiting++;
        }
        // Until the debt is paid at the tenant's rate, then looked at again (work that ended meanwhile may have added to
        // it); at least every LOOK_AGAIN_MS, so that a raised serverCpu applies to calls already waiting.
        await sleep(Math.min(LOOK_AGAIN_MS, Math.ceil(-account.balanceMs / this.#rate(tenant))), undefined, signal ? { signal } : {});
      }
    } finally {
      if (waited) {
        this.#waiting--;
        const account = this.#accounts.get(tenant);
        if (account) account.waitedMs += this.#now() - started;
      }
    }
  }
}
