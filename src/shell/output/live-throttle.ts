import { z } from 'zod';
import { functionOption, parseOptions } from '../../contracts/parse-options.js';

const liveThrottleOptionsSchema = z.strictObject({
  intervalMs: z.number().min(0).max(Number.MAX_SAFE_INTEGER),
  publish: functionOption<() => void>(),
});

/**
 * Calls `publish` at most once per `intervalMs`: the first change is
 * published at once, later changes within the interval are folded into one
 * publication at its end. A flood of changes therefore costs one
 * publication per interval, however many chunks arrive.
 */
export class LiveThrottle {
  readonly #intervalMs: number;
  readonly #publish: () => void;
  #lastPublished = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(raw: z.input<typeof liveThrottleOptionsSchema>) {
    const options = parseOptions(liveThrottleOptionsSchema, raw, 'LiveThrottle');
    this.#intervalMs = options.intervalMs;
    this.#publish = options.publish;
  }

  /** Something changed: publish now, or once the current interval is over. */
  changed(): void {
    if (this.#stopped || this.#timer) return;
    const wait = this.#lastPublished + this.#intervalMs - performance.now();
    if (wait <= 0) {
      this.#fire();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#fire();
    }, wait);
  }

  /** No more publications; a pending one is dropped. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #fire(): void {
    if (this.#stopped) return;
    this.#lastPublished = performance.now();
    this.#publish();
  }
}
