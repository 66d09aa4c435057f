import { boundValue, cutMarker, type BoundOptions } from './bounded-value.js';

/**
 * Characters JSON.stringify writes raw that a reader could take for the end
 * of a line or that change how a line looks: C1 controls (U+0085 NEL among
 * them) and DEL, the Unicode line and paragraph separators (U+2028, U+2029:
 * JavaScript's and Python's `splitlines` break on them), and the bidi
 * controls that reorder what a terminal or an editor shows. Escaped, they
 * parse back to the same string and show as what they are.
 */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** `json` with every character of RAW_IN_JSON written as a `\uXXXX` escape. */
export function escapeLineBreaks(json: string): string {
  return json.replace(RAW_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Lines and bytes a log has written, for its volume metric. */
export interface LogVolume {
  lines: number;
  bytes: number;
  /** Events folded into count records instead of lines of their own. */
  counted: number;
}

export interface LogLineOptions extends Pick<BoundOptions, 'rewrite' | 'hideValueOf'> {
  /** The whole line, its newline included, is at most this many bytes. */
  maxLineBytes: number;
  /** Strings keep at most this many characters (`boundString`). */
  maxStringChars: number;
  /** Fields that are never cut as a whole (they identify the record). Default time, event, tenant. */
  keep?: readonly string[];
}

/** Strings keep at most this much in the second try, for a line the first did not fit. */
const SHORT_STRING_CHARS = 128;

/**
 * One JSON Lines record of `entry`, newline included, that no input can make
 * longer than `maxLineBytes` or split into two lines: strings are cut
 * (`boundValue`) and escaped (`escapeLineBreaks`); a line still too long is
 * tried again with short strings, then its largest fields are replaced by a
 * cut marker of their JSON, one by one; as a last resort only the kept fields
 * and a marker of the rest remain.
 */
export function jsonLogLine(entry: Record<string, unknown>, options: LogLineOptions): string {
  const fits = (line: string) => Buffer.byteLength(line) <= options.maxLineBytes;
  const line = (value: unknown) => `${escapeLineBreaks(JSON.stringify(value))}\n`;
  const rewrite = { ...(options.rewrite ? { rewrite: options.rewrite } : {}), ...(options.hideValueOf ? { hideValueOf: options.hideValueOf } : {}) };
  const first = line(boundValue(entry, { maxStringChars: options.maxStringChars, ...rewrite }));
  if (fits(first)) return first;
  const short = boundValue(entry, { maxStringChars: Math.min(options.maxStringChars, SHORT_STRING_CHARS), maxEntries: 16, ...rewrite }) as Record<
    string,
    unknown
  >;
  if (fits(line(short))) return line(short);
  const keep = new Set(options.keep ?? ['time', 'event', 'tenant']);
  const bySize = Object.keys(short)
    .filter((key) => !keep.has(key))
    .sort((a, b) => JSON.stringify(short[b]).length - JSON.stringify(short[a]).length);
  for (const key of bySize) {
    short[key] = cutMarker(JSON.stringify(entry[key]) ?? '');
    if (fits(line(short))) return line(short);
  }
  const kept = Object.fromEntries(Object.entries(short).filter(([key]) => keep.has(key)));
  const last = line({ ...kept, cut: cutMarker(JSON.stringify(entry) ?? '') });
  return fits(last) ? last : line({ cut: cutMarker(JSON.stringify(entry) ?? '') });
}
