import { posix } from 'node:path';
import type { SpawnOptions } from '../backend.js';
import type { SpawnRequest } from './protocol.js';

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new TypeError(message);
}

/**
 * Validates SpawnOptions and turns them into the supervisor's request.
 * Throws TypeError/RangeError naming the bad field. `cwd` must stay inside
 * the workspace; `stdin` is only sent in pipes mode (pty mode: EOF at once).
 */
export function toSpawnRequest(options: SpawnOptions, logName: string | undefined): SpawnRequest {
  check(typeof options === 'object' && options !== null, 'spawn: options must be an object');
  check(typeof options.command === 'string', 'spawn: options.command must be a string');
  check(!options.command.includes('\0'), 'spawn: options.command must not contain NUL');
  check(typeof options.cwd === 'string', 'spawn: options.cwd must be a string');
  const cwd = options.cwd === '' ? '.' : posix.normalize(options.cwd);
  check(!posix.isAbsolute(cwd), 'spawn: options.cwd must be relative to the workspace root');
  check(cwd !== '..' && !cwd.startsWith('../'), 'spawn: options.cwd must stay inside the workspace');
  check(typeof options.env === 'object' && options.env !== null && !Array.isArray(options.env), 'spawn: options.env must be an object');
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.env)) {
    check(key.length > 0 && !key.includes('=') && !key.includes('\0'), `spawn: options.env has an invalid name ${JSON.stringify(key)}`);
    check(typeof value === 'string' && !value.includes('\0'), `spawn: options.env.${key} must be a string without NUL`);
    env[key] = value;
  }
  check(options.mode === 'pty' || options.mode === 'pipes', "spawn: options.mode must be 'pty' or 'pipes'");
  for (const field of ['cols', 'rows'] as const) {
    const value = options[field];
    if (value === undefined) continue;
    check(Number.isInteger(value), `spawn: options.${field} must be an integer`);
    if (value < 1 || value > 10_000) throw new RangeError(`spawn: options.${field} must be between 1 and 10000`);
  }
  if (options.stdin !== undefined) check(options.stdin instanceof Uint8Array, 'spawn: options.stdin must be a Uint8Array');
  if (options.background !== undefined) check(typeof options.background === 'boolean', 'spawn: options.background must be a boolean');
  if (options.outputBudget !== undefined) {
    check(typeof options.outputBudget === 'object' && options.outputBudget !== null, 'spawn: options.outputBudget must be an object');
    for (const field of ['forwardBytes', 'tailBytes', 'drainBytesPerSecond'] as const) {
      const value = options.outputBudget[field];
      if (value === undefined && field === 'drainBytesPerSecond') continue;
      check(Number.isSafeInteger(value) && value! >= 0, `spawn: options.outputBudget.${field} must be a non-negative integer`);
    }
  }
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
