import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { MAX_SECRET_BYTES, secretValueProblem } from './secret-rules.js';

/** Where one secret of the user's settings comes from: a host environment variable, or a file. */
export type SecretSource = { env: string } | { file: string };

/** The values found, and what could not be found (one line each, naming the secret and its source, never a value). */
export interface ResolvedSecrets {
  values: Record<string, string>;
  problems: string[];
}

/**
 * Reads the values of `sandbox.secrets` on the host: `{"env": "NAME"}` from
 * the host's environment, `{"file": "/path"}` (or `~/path`) from a file,
 * one trailing line break dropped. A value that is missing, unreadable or
 * unfit (secretValueProblem) is left out with a problem line; the command
 * then simply lacks it.
 */
export function resolveLocalSecrets(
  sources: Readonly<Record<string, SecretSource>> | undefined,
  context: { env?: Readonly<Record<string, string | undefined>>; homeDir?: string } = {},
): ResolvedSecrets {
  const env = context.env ?? process.env;
  const values: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, source] of Object.entries(sources ?? {})) {
    const where = 'env' in source ? `$${source.env}` : source.file;
    let value: string | undefined;
    if ('env' in source) {
      value = env[source.env];
      if (value === undefined || value === '') {
        problems.push(`sandbox.secrets.${name}: ${where} is not set in toolcell's environment; commands run without ${name}`);
        continue;
      }
    } else {
      const path = source.file.startsWith('~/') ? join(context.homeDir ?? homedir(), source.file.slice(2)) : source.file;
      try {
        value = readSecretFile(path).replace(/\r?\n$/, '');
      } catch (error) {
        problems.push(
          `sandbox.secrets.${name}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); commands run without ${name}`,
        );
        continue;
      }
    }
    const problem = secretValueProblem(value);
    if (problem) problems.push(`sandbox.secrets.${name}: the value from ${where} ${problem}; commands run without ${name}`);
    else values[name] = value;
  }
  return { values, problems };
}

/** A regular file of at most MAX_SECRET_BYTES, opened without blocking (a FIFO cannot hang the run). */
function readSecretFile(path: string): string {
  if (!isAbsolute(path)) throw new Error('not an absolute path');
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error('not a regular file');
    if (stats.size > MAX_SECRET_BYTES) throw new Error(`larger than ${MAX_SECRET_BYTES} bytes`);
    const buffer = Buffer.alloc(MAX_SECRET_BYTES + 1);
    let length = 0;
    for (let read = 1; read > 0 && length <= MAX_SECRET_BYTES; length += read) read = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > MAX_SECRET_BYTES) throw new Error(`larger than ${MAX_SECRET_BYTES} bytes`);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
