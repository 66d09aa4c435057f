import { TokenBucket } from './token-bucket.js';

/**
 * What each tenant uses now: open sessions, running calls, and its call-rate
 * bucket. Counting is synchronous, so a check and its increment never
 * interleave with another request's.
 */
export class TenantUsage {
  readonly #sessions = new Map<string, number>();
  readonly #calls = new Map<string, number>();
  readonly #buckets = new Map<string, TokenBucket>();
  readonly #sessionBuckets = new Map<string, TokenBucket>();
  readonly #requestBuckets = new Map<string, TokenBucket>();

  /** Counts a session in when the tenant is under `limit`. */
  countSessionIn(tenant: string, limit: number): boolean {
    return increment(this.#sessions, tenant, limit);
  }

  countSessionOut(tenant: string): void {
    decrement(this.#sessions, tenant);
  }

  /** Counts a call in when the tenant is under `limit`. */
  startCall(tenant: string, limit: number): boolean {
    return increment(this.#calls, tenant, limit);
  }

  endCall(tenant: string): void {
    decrement(this.#calls, tenant);
  }

  /** One token of the tenant's call bucket; a changed limit starts a new, full bucket. */
  takeCallToken(tenant: string, perMinute: number): ReturnType<TokenBucket['take']> {
    return take(this.#buckets, tenant, perMinute);
  }

  /** One token of the tenant's request bucket (every authenticated request); a changed limit starts a new, full bucket. */
  takeRequestToken(tenant: string, perMinute: number): ReturnType<TokenBucket['take']> {
    return take(this.#requestBuckets, tenant, perMinute);
  }

  /** One token of the tenant's session-open bucket; a changed limit starts a new, full bucket. */
  takeSessionToken(tenant: string, perMinute: number): ReturnType<TokenBucket['take']> {
    return take(this.#sessionBuckets, tenant, perMinute);
  }

  /** A removed tenant's buckets go (its counters reach 0 as its sessions close). */
  forget(tenant: string): void {
    this.#buckets.delete(tenant);
    this.#sessionBuckets.delete(tenant);
    this.#requestBuckets.delete(tenant);
  }
}

function take(buckets: Map<string, TokenBucket>, tenant: string, perMinute: number): ReturnType<TokenBucket['take']> {
  let bucket = buckets.get(tenant);
  if (bucket?.perMinute !== perMinute) {
    bucket = new TokenBucket({ perMinute });
    buckets.set(tenant, bucket);
  }
  return bucket.take();
}

function increment(counts: Map<string, number>, tenant: string, limit: number): boolean {
  const now = counts.get(tenant) ?? 0;
  if (now >= limit) return false;
  counts.set(tenant, now + 1);
  return true;
}

function decrement(counts: Map<string, number>, tenant: string): void {
  const now = (counts.get(tenant) ?? 1) - 1;
  if (now <= 0) counts.delete(tenant);
  else counts.set(tenant, now);
}
