/**
 * Text that others chose (a tenant's name, a token's `sub`, a client's
 * header, a server's error message) printed for a person: on a terminal a
 * control character can erase a line and draw another, a bidi override can
 * reorder a row, a zero-width character can make two names look alike, and a
 * newline can forge a log line. Unlike `sanitize` (style.ts), which removes
 * such characters from output meant to be read as text, these functions keep
 * them visible, escaped, so that the operator sees that something is there
 * and two different values never print the same.
 */

/**
 * What is escaped: backslash (so that an escape in the output always means
 * one), control characters (C0, DEL, C1), format characters (bidi controls,
 * zero-width characters, soft hyphen, tags), line and paragraph separators,
 * lone surrogates, unassigned code points and every space but U+0020.
 */
const UNSAFE = /[\\\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Cn}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu;

const NAMED: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0)!;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

/** `text` on one line, every character that could drive a terminal or hide itself escaped (`\x1b`, `\u202e`, `\n`, `\\`). */
export function escapeText(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/**
 * One cell of a whitespace-aligned table: escaped as `escapeText`, and quoted
 * (`"a b"`, `""`) when it is empty or holds a space or a quote, so that a value
 * cannot pass for several columns.
 */
export function escapeCell(text: string): string {
  const escaped = escapeText(text);
  return escaped === '' || /[ "]/.test(escaped) ? `"${escaped.replace(/"/g, '\\"')}"` : escaped;
}

/**
 * Characters JSON.stringify leaves raw that a terminal acts on or hides
 * (it escapes C0, quote and backslash, and lone surrogates already). They can
 * only stand inside JSON strings, where `\uXXXX` means the same.
 */
const JSON_UNSAFE = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/** `JSON.stringify(value, null, indent)` with what a terminal would act on escaped: the same JSON to a parser. */
export function terminalJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, null, indent).replace(JSON_UNSAFE, (char) =>
    Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}
