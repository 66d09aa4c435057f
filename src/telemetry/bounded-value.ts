import { createHash } from 'node:crypto';

/**
 * How far past the kept head a `rewrite` (the audit log's redaction) reads a
 * long string: a secret that starts in the head is seen whole, while the
 * cost stays that of the head, not of the megabytes behind it.
 */
const REWRITE_MARGIN = 65_536;

/** Object keys keep at most this many characters (a key is a name, never data). */
const MAX_KEY_CHARS = 256;

export interface BoundOptions {
  /** A longer string keeps this many characters, then a cut marker (`cutMarker`). */
  maxStringChars: number;
  /** Objects and arrays keep this many entries, then say how many more there were. Default 256. */
  maxEntries?: number;
  /** Values nested deeper become a marker. Default 32. */
  maxDepth?: number;
  /**
   * Applied to every kept string before it is cut (to the head's window of a
   * long one): the audit log's redaction. `field` is the top-level key the
   * string lies under.
   */
  rewrite?: (text: string, field: string | undefined) => string;
  /** A replacement for the whole value under `key` (a secret-looking name), or undefined to keep it. */
  hideValueOf?: (key: string, field: string | undefined) => string | undefined;
}

/**
 * What replaces the cut part of a long value: its whole length in UTF-8
 * bytes and the SHA-256 of those bytes (as the tenant sent them), so a
 * record still identifies the value, and two records of one value match.
 */
export function cutMarker(text: string): string {
  return `…[cut: ${Buffer.byteLength(text)} bytes in all, sha256 ${createHash('sha256').update(text).digest('hex')}]`;
}

/** `text`, or its head and a cut marker when it is longer than `maxChars`. */
export function boundString(text: string, maxChars: number, rewrite?: (text: string) => string): string {
  if (text.length <= maxChars) return rewrite ? rewrite(text) : text;
  const window = text.slice(0, maxChars + REWRITE_MARGIN);
  let head = (rewrite ? rewrite(window) : window).slice(0, maxChars);
  // Never half a surrogate pair: JSON would write it as an escape of a character that is not there.
  if (/[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1);
  return `${head}${cutMarker(text)}`;
}

/**
 * A copy of a JSON-like value whose size no input can grow past a bound:
 * long strings cut (`boundString`), objects and arrays held to `maxEntries`,
 * nesting to `maxDepth`. The cost is that of what is kept (plus one hash of
 * each cut string), never that of the input.
 */
export function boundValue(value: unknown, options: BoundOptions): unknown {
  return bound(value, { maxEntries: 256, maxDepth: 32, ...options }, undefined, 0);
}

function bound(
  value: unknown,
  options: Required<Pick<BoundOptions, 'maxEntries' | 'maxDepth'>> & BoundOptions,
  field: string | undefined,
  depth: number,
): unknown {
  if (typeof value === 'string') return boundString(value, options.maxStringChars, options.rewrite && ((text) => options.rewrite!(text, field)));
  if (value === null || typeof value !== 'object') return value;
  if (depth >= options.maxDepth) return '[cut: nested too deep]';
  if (Array.isArray(value)) {
    const kept = value.slice(0, options.maxEntries).map((item) => bound(item, options, field, depth + 1));
    if (value.length > options.maxEntries) kept.push(`[cut: ${value.length - options.maxEntries} more entries]`);
    return kept;
  }
  const copy: Record<string, unknown> = {};
  let seen = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (seen++ >= options.maxEntries) continue;
    const under = depth === 0 ? key : field;
    const hidden = options.hideValueOf?.(key, under);
    copy[boundString(key, MAX_KEY_CHARS)] = hidden ?? bound((value as Record<string, unknown>)[key], options, under, depth + 1);
  }
  if (seen > options.maxEntries) copy['[cut]'] = `${seen - options.maxEntries} more entries`;
  return copy;
}
