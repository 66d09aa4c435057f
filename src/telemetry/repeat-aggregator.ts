import { z } from 'zod';
import { functionOption, parseOptions } from '../contracts/parse-options.js';

/**
 * What an aggregator groups an event by: events with one `key` in one
 * interval are one record; when the interval already counts `maxKeys` keys,
 * a new key's events are counted by their `group` only (so a flood of
 * distinct keys, random host names say, still writes a bounded number of lines).
 */
export interface RepeatKey {
  key: string;
  group: string;
}

/** At the end of an interval: how many more events of one key came after the one written. */
export interface RepeatCount<E> {
  kind: 'repeats';
  /** The first event of the key in the interval (the one that was written). */
  first: E;
  count: number;
  since: number;
  until: number;
}

/** At the end of an interval: events of keys past `maxKeys`, none of which was written. */
export interface OverflowCount<E> {
  kind: 'overflow';
  /** The first of them, for its group's fields (event name, tenant). */
  sample: E;
  count: number;
  /** How many distinct keys they had, counted up to `maxKeys` (then "at least"). */
  keys: number;
  since: number;
  until: number;
}

/** Checks RepeatAggregatorOptions (below, generic in the event type, which a schema cannot carry). */
const repeatAggregatorOptionsSchema = z.strictObject({
  intervalMs: z.number().int().min(1),
  maxKeys: z.number().int().min(1),
  keyOf: functionOption<unknown>(),
  onCounts: functionOption<unknown>(),
  now: functionOption<unknown>().optional(),
});

export interface RepeatAggregatorOptions<E> {
  /** How long one count runs. */
  intervalMs: number;
  /** Distinct keys counted one by one per interval. */
  maxKeys: number;
  /** An event's key, or undefined for an event that is always written. */
  keyOf: (event: E) => RepeatKey | undefined;
  /** The counts of an interval that ended (or was flushed), in the order their keys first came. */
  onCounts: (counts: Array<RepeatCount<E> | OverflowCount<E>>) => void;
  now?: () => number;
}

/**
 * Turns floods of one kind of event (refused connections to a host, bad keys
 * from an address) into count records: per interval, the first event of each
 * key is written as it comes and the rest are only counted, then written as
 * one record when the interval ends. A log then grows with the number of
 * distinct keys and intervals, at most 2 × maxKeys + groups lines an
 * interval, not with the number of events. Nothing is lost: every event is
 * written or counted, and `close` writes the counts still open.
 */
export class RepeatAggregator<E> {
  readonly #options: RepeatAggregatorOptions<E>;
  readonly #now: () => number;
  #keys = new Map<string, { first: E; count: number; since: number; until: number }>();
  #overflow = new Map<string, { sample: E; count: number; keys: Set<string>; since: number; until: number }>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(options: RepeatAggregatorOptions<E>) {
    parseOptions(repeatAggregatorOptionsSchema, options, 'RepeatAggregator');
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#timer = setInterval(() => this.flush(), options.intervalMs);
    this.#timer.unref();
  }

  /**
   * True when `event` is to be written now; false when it was counted and
   * will be part of a count record. `weight` is how many events it stands
   * for (a count record from another aggregator).
   */
  admit(event: E, weight = 1): boolean {
    const id = this.#closed ? undefined : this.#options.keyOf(event);
    if (!id) return true;
    const now = this.#now();
    const known = this.#keys.get(id.key);
    if (known) {
      if (known.count === 0) known.since = now;
      known.count += weight;
      known.until = now;
      return false;
    }
    if (this.#keys.size < this.#options.maxKeys) {
      this.#keys.set(id.key, { first: event, count: 0, since: now, until: now });
      return true;
    }
    const group = this.#overflow.get(id.group);
    if (!group) {
      this.#overflow.set(id.group, { sample: event, count: weight, keys: new Set([id.key]), since: now, until: now });
      return false;
    }
    group.count += weight;
    group.until = now;
    if (group.keys.size < this.#options.maxKeys) group.keys.add(id.key);
    return false;
  }

  /** Ends the interval now: hands on its counts, and the next event of every key is written again. */
  flush(): void {
    const counts: Array<RepeatCount<E> | OverflowCount<E>> = [];
    for (const entry of this.#keys.values()) if (entry.count > 0) counts.push({ kind: 'repeats', ...entry });
    for (const group of this.#overflow.values()) counts.push({ kind: 'overflow', ...group, keys: group.keys.size });
    this.#keys = new Map();
    this.#overflow = new Map();
    if (counts.length > 0) this.#options.onCounts(counts);
  }

  /** Flushes and stops; later events are always written. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.flush();
  }
}
