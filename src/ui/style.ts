import { stripVTControlCharacters } from 'node:util';

/** SGR codes for the few styles the terminal UI uses. */
const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  italic: [3, 23],
  inverse: [7, 27],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
  gray: [90, 39],
} as const;

export type StyleName = keyof typeof CODES;

/** Paints text, or returns it unchanged when colour is off. */
export type Style = Record<StyleName, (text: string) => string> & { readonly enabled: boolean };

export function createStyle(enabled: boolean): Style {
  const style = { enabled } as Style;
  for (const [name, [open, close]] of Object.entries(CODES) as Array<[StyleName, readonly [number, number]]>) {
    style[name] = enabled ? (text: string) => (text ? `\x1b[${open}m${text}\x1b[${close}m` : text) : (text: string) => text;
  }
  return style;
}

/**
 * Whether to colour a stream: only a TTY, and never when NO_COLOR is set to
 * anything non-empty (https://no-color.org). FORCE_COLOR=1+ forces it on.
 */
export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true;
}

/**
 * Makes untrusted text (model answers, tool output, file content) safe to
 * print: escape sequences and control characters other than newline are
 * removed (they could move the cursor, retitle the window or fake the UI),
 * tabs become spaces, and CRLF/CR become newlines.
 */
export function sanitize(text: string): string {
  return (
    stripVTControlCharacters(text)
      .replace(/\r\n?/g, '\n')
      .replace(/\t/g, '    ')
      // eslint-disable-next-line no-control-regex -- removing control characters is the point.
      .replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, '')
  );
}
