import type { CpuGroupControl } from '../../backends/docker/cpu-group-weight.js';
import { errorMessage } from '../../errors.js';

/** A tenant's recent use of the sandboxes' CPUs fades by half in this long. */
export const CPU_USE_HALF_LIFE_MS = 2_000;

/** The weight of a tenant that kept every sandbox CPU busy of late, against 1 for an idle one. */
export const BUSIEST_TENANT_WEIGHT = 0.2;

/** How often the tenants' use is read and their weights set. */
const INTERVAL_MS = 500;

/** A weight changes in the kernel only when it moves by this much (each write costs the kernel a re-weighting). */
const WEIGHT_STEP = 0.02;

export interface TenantCpuWeightsOptions {
  control: CpuGroupControl;
  /** The tenants to weigh now (those with sessions' resources) and each one's CPU group. */
  tenants: () => Iterable<readonly [tenant: string, group: string]>;
  /** How many CPUs the sandboxes share (their CPU set's size): a tenant's use is counted as a part of them. */
  cpus: number;
  intervalMs?: number;
  halfLifeMs?: number;
  /** The clock, in ms (tests). Default performance.now. */
  now?: () => number;
  onLog?: (message: string) => void;
}

/** One tenant's weight now, and the part of the sandboxes' CPUs it used of late (for metrics). */
export interface TenantCpuWeight {
  tenant: string;
  weight: number;
  recentUse: number;
}

interface Use {
  tenant: string;
  /** The group's CPU seconds at `at`. */
  seconds: number;
  at: number;
  /** Its recent use, a part of the sandboxes' CPUs (0-1), fading by half every half-life. */
  recent: number;
  /** The weight last written (1 until one is). */
  weight: number;
}

/**
 * The tenants' CPU weights by recent use. Each tenant's sandboxes share one
 * CPU group, and equal groups share a contended CPU equally: a tenant whose
 * short calls (an `echo`, a `git status`) meet another's spin or build then
 * run at half speed, whatever the other has had already. Here a tenant
 * that kept the sandboxes' CPUs busy over the last seconds weighs less, down
 * to BUSIEST_TENANT_WEIGHT, so a quieter tenant's burst runs at most of the
 * CPU's speed, while the busy tenant still gets every cycle nobody else
 * wants (weights only matter under contention). It is the classic fair-share
 * scheduler's decayed usage, applied between tenants; within a tenant the
 * kernel shares as ever.
 */
export class TenantCpuWeights {
  readonly #options: TenantCpuWeightsOptions;
  readonly #now: () => number;
  readonly #halfLifeMs: number;
  readonly #uses = new Map<string, Use>();
  readonly #timer: NodeJS.Timeout;
  #ticking: Promise<void> | undefined;
  #failed = false;
  #closed = false;

  constructor(options: TenantCpuWeightsOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#halfLifeMs = options.halfLifeMs ?? CPU_USE_HALF_LIFE_MS;
    this.#timer = setInterval(() => {
      this.#ticking ??= this.tick().finally(() => (this.#ticking = undefined));
    }, options.intervalMs ?? INTERVAL_MS);
    this.#timer.unref();
  }

  /** Reads each tenant's CPU time and sets its weight; a tenant no longer listed gets the default weight back. */
  async tick(): Promise<void> {
    const { control, cpus } = this.#options;
    try {
      const live = new Map<string, string>();
      for (const [tenant, group] of this.#options.tenants()) live.set(group, tenant);
      for (const [group, tenant] of live) {
        if (this.#closed) return;
        const seconds = await control.usageSeconds(group);
        if (seconds === undefined) continue;
        const at = this.#now();
        const before = this.#uses.get(group);
        if (before === undefined || at <= before.at) {
          this.#uses.set(group, { tenant, seconds, at, recent: before?.recent ?? 0, weight: before?.weight ?? 1 });
          continue;
        }
        const elapsedMs = at - before.at;
        const used = Math.min(1, (Math.max(0, seconds - before.seconds) * 1000) / elapsedMs / cpus);
        const kept = 2 ** (-elapsedMs / this.#halfLifeMs);
        const recent = before.recent * kept + used * (1 - kept);
        let weight = before.weight;
        // Below a hundredth of the CPUs, the default weight itself: the kernel's own default again once a tenant is quiet.
        const wanted = recent < 0.01 ? 1 : 1 - (1 - BUSIEST_TENANT_WEIGHT) * recent;
        if (Math.abs(wanted - weight) >= WEIGHT_STEP || (wanted === 1 && weight !== 1)) {
          weight = wanted;
          await control.setWeight(group, weight);
        }
        this.#uses.set(group, { tenant, seconds, at, recent, weight });
      }
      for (const [group, use] of this.#uses) {
        if (live.has(group)) continue;
        this.#uses.delete(group);
        if (use.weight !== 1) await control.setWeight(group, 1);
      }
    } catch (error) {
      // Said once (a read-only /sys/fs/cgroup, no root): the weights then stay as the kernel has them.
      if (!this.#failed) this.#options.onLog?.(`tenants' CPU weights not set: ${errorMessage(error)}`);
      this.#failed = true;
    }
  }

  /** Each weighed tenant's weight now and its recent use. */
  weights(): TenantCpuWeight[] {
    return [...this.#uses.values()].map(({ tenant, weight, recent }) => ({ tenant, weight, recentUse: recent }));
  }

  /** Stops, and gives every group it lowered the default weight back. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#ticking;
    for (const [group, use] of this.#uses) if (use.weight !== 1) await this.#options.control.setWeight(group, 1).catch(() => {});
    this.#uses.clear();
  }
}
