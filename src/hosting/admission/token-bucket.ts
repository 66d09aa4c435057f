import { z } from 'zod';
import { functionOption, parseOptions } from '../../contracts/parse-options.js';

const tokenBucketOptionsSchema = z.strictObject({
  perMinute: z.number().gt(0),
  now: functionOption<() => number>().optional(),
});

/**
 * A token bucket: `capacity` tokens, refilled evenly at `perMinute` a
 * minute. A burst up to the capacity passes; after it, calls pass at the
 * refill rate. `take` says how long until the next token when there is none,
 * which becomes the `Retry-After` of the 429.
 */
export class TokenBucket {
  readonly perMinute: number;
  #tokens: number;
  #updated: number;
  readonly #now: () => number;

  constructor(raw: z.input<typeof tokenBucketOptionsSchema>) {
    const options = parseOptions(tokenBucketOptionsSchema, raw, 'TokenBucket');
    this.perMinute = options.perMinute;
    this.#now = options.now ?? Date.now;
    this.#tokens = options.perMinute;
    this.#updated = this.#now();
  }

  /** Takes one token: `{ok: true}`, or how many whole seconds until one is there. */
  take(): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const now = this.#now();
    const perMs = this.perMinute / 60_000;
    this.#tokens = Math.min(this.perMinute, this.#tokens + (now - this.#updated) * perMs);
    this.#updated = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - this.#tokens) / perMs / 1000)) };
  }
}
