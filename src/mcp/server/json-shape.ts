/**
 * How much structure a request body has, counted before it is parsed.
 * `JSON.parse` runs on the event loop, and its cost follows what it builds,
 * not the bytes: four megabytes of `{},{},…` (1.3 million objects) took the
 * event loop over a second to parse and collect, where four megabytes of one
 * string take a few milliseconds. A body with more values than any tool call
 * needs, or nested deeper, is refused before it is parsed.
 */

/** The most JSON values a body may have: objects, arrays and the items after a comma. A tool call has a few hundred. */
export const DEFAULT_MAX_BODY_VALUES = 50_000;

/** The deepest a body's objects and arrays may nest. A tool call nests a few levels. */
export const DEFAULT_MAX_BODY_DEPTH = 64;

export interface JsonShapeLimits {
  maxValues: number;
  maxDepth: number;
}

/** Which limit a body passes: `values` (maxValues) or `depth` (maxDepth). */
export type JsonShapeProblem = 'values' | 'depth';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * The first limit `json` passes, or undefined. It counts every `{`, `[` and
 * `,` outside strings (each starts a value) and tracks nesting, stopping at
 * the first limit passed, so the work is at most one pass over the bytes
 * and far less for a hostile body. Strings are skipped with `indexOf`, so a
 * body that is mostly one long string costs next to nothing. It does not
 * check that the text is JSON: `JSON.parse` does that after.
 */
export function jsonShapeProblem(json: Uint8Array, limits: JsonShapeLimits): JsonShapeProblem | undefined {
  let values = 0;
  let depth = 0;
  const length = json.length;
  for (let i = 0; i < length; i++) {
    const byte = json[i];
    if (byte === QUOTE) {
      const end = closingQuote(json, i);
      if (end < 0) return undefined; // an unterminated string: not JSON, which the parser says
      i = end;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limits.maxDepth) return 'depth';
      if (++values > limits.maxValues) return 'values';
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    } else if (byte === COMMA && ++values > limits.maxValues) {
      return 'values';
    }
  }
  return undefined;
}

/** The index of the quote that ends the string opened at `open`: the next one not escaped by an odd run of backslashes; -1 if none. */
function closingQuote(json: Uint8Array, open: number): number {
  let at = open;
  for (;;) {
    at = json.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    // Each run of backslashes is looked at once: the runs before different quotes do not overlap.
    let backslashes = 0;
    while (json[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
