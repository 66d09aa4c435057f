const SIMPLE: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

const HEX_DIGITS = { x: 2, u: 4, U: 8 } as const;

/**
 * The value of `$'…'` (the text between the quotes), as bash 5.2 decodes
 * it: C escapes, `\nnn`, `\xHH`, `\uHHHH`, `\cX`; an unknown escape keeps
 * its backslash; the value ends at a NUL byte (`$'r\0x'm` is `rm`).
 * Undefined when the value depends on the locale or is not text (a code
 * point or byte past ASCII): the word is then not literal.
 */
export function decodeAnsiC(body: string): string | undefined {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) {
      out += '\\';
      break;
    }
    i++;
    if (SIMPLE[next] !== undefined) out += SIMPLE[next];
    else if (next === 'x' || next === 'u' || next === 'U') {
      const hex = new RegExp(`^[0-9a-fA-F]{1,${HEX_DIGITS[next]}}`, 'u').exec(body.slice(i + 1))?.[0];
      if (!hex) {
        out += `\\${next}`;
        continue;
      }
      const code = parseInt(hex, 16);
      if (code >= 0x80) return undefined;
      out += String.fromCharCode(code);
      i += hex.length;
    } else if (next >= '0' && next <= '7') {
      const oct = /^[0-7]{1,3}/u.exec(body.slice(i))![0];
      const code = parseInt(oct, 8) & 0xff;
      if (code >= 0x80) return undefined;
      out += String.fromCharCode(code);
      i += oct.length - 1;
    } else if (next === 'c') {
      const control = body[i + 1];
      if (control === undefined) return undefined;
      i++;
      out += control === '?' ? '\x7f' : String.fromCharCode(control.toUpperCase().charCodeAt(0) & 0x1f);
    } else out += `\\${next}`;
  }
  const nul = out.indexOf('\0');
  return nul >= 0 ? out.slice(0, nul) : out;
}
