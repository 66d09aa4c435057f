import { boundValue, type BoundOptions } from '../../telemetry/bounded-value.js';

/**
 * The audit log's redaction rule for tool arguments (SECURITY.md, "What the
 * audit log keeps"). A shell command is kept (up to the log's bound) so an
 * operator can see what ran; only the values that look secret become
 * `[REDACTED]`, the words around them stay. The rule errs towards redacting: a harmless value under a
 * secret-looking name is lost, a secret under an innocent one may not be.
 */
export const REDACTED = '[REDACTED]';

/** Words that make a name (an argument's key, a flag, a variable) look secret. */
const SECRET_WORD = String.raw`(?:secret|token|passw(?:or)?d|passphrase|api[-_]?key|apikey|access[-_]?key|private[-_]?key|authorization|credentials?|session[-_]?key)`;

/** An argument key that looks secret: its whole value is replaced, whatever its type. */
const SECRET_KEY = new RegExp(SECRET_WORD, 'i');

/**
 * Patterns inside strings, applied in order. Each keeps its first group (the
 * name, flag or scheme before the secret) and replaces the rest of the match;
 * a rule with `name` applies only when that test passes on the group.
 * Every pattern starts only where a name or token can start (a lookbehind)
 * and bounds its repetitions, so a megabyte of argument is scanned in linear
 * time; test/hosting/redact.test.ts holds that line.
 */
const STRING_RULES: ReadonlyArray<{ pattern: RegExp; name?: RegExp }> = [
  // PEM private keys, also a block cut short (the rest of the text goes).
  { pattern: /(-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----)[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|$)/g },
  // JWTs (header.payload.signature; `alg: none` has an empty signature).
  { pattern: /()(?<![\w-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g },
  // toolcell API keys: the public key id stays, so the line says which key was used.
  { pattern: /((?<!\w)tc_[a-z0-9]{6,40}_)[A-Za-z0-9_-]{8,}/g },
  // GitHub tokens (classic and fine-grained).
  { pattern: /()(?<!\w)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g },
  // AWS access key ids; the secret key goes by its name (aws_secret_access_key=…).
  { pattern: /()(?<!\w)(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?!\w)/g },
  // Other vendors' well-known token shapes (Slack, OpenAI-style, Stripe, Google API keys).
  { pattern: /()(?<![\w-])(?:xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|[rs]k_live_[A-Za-z0-9]{16,}|AIza[A-Za-z0-9_-]{35})/g },
  // `Authorization: <scheme> <value>` and a bare `Bearer <value>`.
  { pattern: /((?<!\w)authorization\s{0,8}[:=]\s{0,8}["']?(?:\w{1,32}\s+)?)[^\s"',;]+/gi },
  { pattern: /((?<!\w)bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi },
  // Credentials in a URL: scheme://user:PASSWORD@host.
  { pattern: /((?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/@]{1,256}:)[^\s@/]{1,1024}(?=@)/gi },
  // `curl -u user:PASSWORD` and `--user user:PASSWORD`.
  { pattern: /((?<!\S)(?:-u|--user)[\s=]+["']?[^\s:"']{1,256}:)[^\s"']+/g },
  // Flags whose name looks secret: --password=X, --token X, --api-key "X y".
  { pattern: /((?<!\S)--?[\w-]{1,64}(?:=|\s+))(?:"[^"]*"|'[^']*'|[^\s"']+)/g, name: /^--?[\w-]*SECRET(?:[\w-]*)(?:=|\s+)$/ },
  // The -pPASSWORD form of the programs that take it (mysql and friends, sshpass); `-p` elsewhere is a port or `mkdir -p`.
  { pattern: /((?<![\w-])(?:mysql\w{0,16}|mariadb[\w-]{0,16}|sshpass)(?![\w-])[^|;&\n]{0,512}?\s-p)[^\s-][^\s]*/g },
  // VAR=value and "key": "value" where the name looks secret (export GH_TOKEN=…, ?token=…, JSON in a -d body).
  { pattern: /((?<![\w.-])[\w.-]{1,128}=)(?:"[^"]*"|'[^']*'|[^\s&"';|]+)/g, name: /SECRET[\w.-]*=$/ },
  { pattern: /("[\w.-]{1,128}"\s{0,8}:\s{0,8})"(?:[^"\\]|\\.)*"/g, name: /SECRET[\w.-]*"/ },
].map((rule) => (rule.name ? { ...rule, name: new RegExp(rule.name.source.replace('SECRET', SECRET_WORD), 'i') } : rule));

/** A string with every secret-looking value replaced by `[REDACTED]`. */
export function redactString(text: string): string {
  let result = text;
  for (const { pattern, name } of STRING_RULES) {
    result = result.replace(pattern, (match: string, kept: string) => {
      if (name && !name.test(kept)) return match;
      // A PEM block keeps its BEGIN line and says what kind of key it was.
      if (kept.startsWith('-----BEGIN')) return `${kept}${REDACTED}${kept.replace('BEGIN', 'END')}`;
      return `${kept}${REDACTED}`;
    });
  }
  return result;
}

/**
 * The redaction of a tool call's arguments, as `boundValue` options for the
 * values under `field` (the audit log's `args`): a value under a secret-looking
 * key is replaced whole, whatever its type; every string is passed through
 * `redactString` (a long one only over the head it keeps, so a megabyte of
 * argument costs what its head costs).
 */
export function argumentRedaction(field: string | undefined): Pick<BoundOptions, 'rewrite' | 'hideValueOf'> {
  return {
    rewrite: (text, under) => (field === undefined || under === field ? redactString(text) : text),
    hideValueOf: (key, under) => ((field === undefined || under === field) && SECRET_KEY.test(key) ? REDACTED : undefined),
  };
}

/**
 * A copy of a tool call's arguments with secrets redacted
 * (`argumentRedaction`) and every string past `maxStringChars` cut to its
 * head and a marker with its length and SHA-256 (`boundString`), the shell
 * command included: no argument can write megabytes into the log. Numbers,
 * booleans and null stay as they are.
 */
export function redactArgs(args: Record<string, unknown>, options: { maxStringChars?: number } = {}): Record<string, unknown> {
  return boundValue(args, { maxStringChars: options.maxStringChars ?? DEFAULT_MAX_STRING_CHARS, ...argumentRedaction(undefined) }) as Record<string, unknown>;
}

/** Long enough for any path, pattern, edit or command a person reads; a file's content, or a flood, is cut. */
export const DEFAULT_MAX_STRING_CHARS = 4096;
