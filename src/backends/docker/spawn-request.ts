import { posix } from 'node:path';
import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';
import type { SpawnOptions } from '../backend.js';
import type { SpawnRequest } from './protocol.js';

const withoutNul = (what: string) => z.string().refine((text) => !text.includes('\0'), { error: `must be ${what} without NUL` });
const terminalSize = z.number().int().min(1).max(10_000).optional();
const byteCount = z.number().int().min(0);

/** SpawnOptions (backend.ts says what each does) as the Docker backend accepts them. */
const spawnOptionsSchema = z.strictObject({
  command: withoutNul('a string'),
  /** Normalized; '' is the workspace root. */
  cwd: z
    .string()
    .transform((cwd) => (cwd === '' ? '.' : posix.normalize(cwd)))
    .refine((cwd) => !posix.isAbsolute(cwd), { error: 'must be relative to the workspace root' })
    .refine((cwd) => cwd !== '..' && !cwd.startsWith('../'), { error: 'must stay inside the workspace' }),
  env: z.record(
    z.string().refine((name) => name.length > 0 && !name.includes('=') && !name.includes('\0'), { error: "must have names without '=' or NUL" }),
    withoutNul('a string'),
  ),
  mode: z.enum(['pty', 'pipes'], { error: "must be 'pty' or 'pipes'" }),
  cols: terminalSize,
  rows: terminalSize,
  stdin: z.instanceof(Uint8Array, { error: 'must be a Uint8Array' }).optional(),
  background: z.boolean().optional(),
  outputBudget: z.strictObject({ forwardBytes: byteCount, tailBytes: byteCount, drainBytesPerSecond: byteCount.optional() }).optional(),
});

/**
 * Validates SpawnOptions and turns them into the supervisor's request.
 * Throws TypeError/RangeError naming the bad field. `cwd` must stay inside
 * the workspace; `stdin` is only sent in pipes mode (pty mode: EOF at once).
 */
export function toSpawnRequest(raw: SpawnOptions, logName: string | undefined): SpawnRequest {
  const options = parseOptions(spawnOptionsSchema, raw, 'spawn');
  const { cwd, env } = options;
  const background = options.background === true;
  const request: SpawnRequest = {
    command: options.command,
    cwd,
    env,
    mode: options.mode,
    stdin: !background && options.mode === 'pipes' && options.stdin !== undefined && options.stdin.length > 0,
    background,
  };
  if (options.cols !== undefined) request.cols = options.cols;
  if (options.rows !== undefined) request.rows = options.rows;
  if (background && logName !== undefined) request.logName = logName;
  if (!background && options.outputBudget !== undefined) {
    const { forwardBytes, tailBytes, drainBytesPerSecond } = options.outputBudget;
    request.outputBudget = { forwardBytes, tailBytes, ...(drainBytesPerSecond ? { drainBytesPerSecond } : {}) };
  }
  return request;
}
