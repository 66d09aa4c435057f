import { MIN_SECRET_CHARS } from './secret-redactor.js';

/** A secret's name: the environment variable commands read it from. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Longest value accepted (a PEM key fits; an environment variable should not hold more). */
export const MAX_SECRET_BYTES = 64 * 1024;

/** Names toolcell sets for every command itself (environment.ts, the egress proxy): a secret must not replace them. */
const RESERVED = new Set([
  'PATH',
  'HOME',
  'LANG',
  'TERM',
  'COLUMNS',
  'LINES',
  'PAGER',
  'GIT_PAGER',
  'GIT_TERMINAL_PROMPT',
  'TOOLCELL',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'http_proxy',
  'https_proxy',
  'NO_PROXY',
  'no_proxy',
]);

/** What is wrong with a secret's name, or undefined. */
export function secretNameProblem(name: string): string | undefined {
  if (!SECRET_NAME.test(name)) return 'must be an environment variable name (A-Z a-z 0-9 _, not starting with a digit, at most 128)';
  if (RESERVED.has(name)) return 'is set by toolcell for every command and cannot be a secret';
  return undefined;
}

/** What is wrong with a secret's value, in words that never quote it; undefined when fine. */
export function secretValueProblem(value: string): string | undefined {
  if (value.includes('\0')) return 'holds a NUL character, which no environment variable can';
  if (value.length < MIN_SECRET_CHARS)
    return `is shorter than ${MIN_SECRET_CHARS} characters: too short to be told apart from ordinary output, so it could not be redacted`;
  if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_BYTES) return `is larger than ${MAX_SECRET_BYTES} bytes`;
  return undefined;
}
