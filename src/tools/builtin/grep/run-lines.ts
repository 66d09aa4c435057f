import { spawn } from 'node:child_process';

export interface RunLinesOptions {
  cwd: string;
  signal: AbortSignal;
  /** Extra environment variables (added to this process's environment). */
  env?: Record<string, string>;
  /** Called per stdout line (without the newline); return false to stop the process early. */
  onLine(line: Buffer): boolean;
}

export interface RunLinesResult {
  /** Exit code; null when the process was stopped by `onLine` or died by a signal. */
  code: number | null;
  /** The first 4 KB of stderr. */
  stderr: string;
  /** True when `onLine` asked to stop. */
  stopped: boolean;
}

const MAX_STDERR_BYTES = 4096;

/**
 * Runs a search command and feeds its stdout to `onLine` line by line.
 * Resolves null when the command cannot be started (not installed). The
 * abort signal kills the process (SIGKILL: searches hold nothing worth a
 * graceful exit) and rejects with an AbortError.
 */
export function runLines(command: string, args: readonly string[], options: RunLinesOptions): Promise<RunLinesResult | null> {
  options.signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ? { ...process.env, ...options.env } : process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: options.signal,
      killSignal: 'SIGKILL',
    });
    let pending: Buffer = Buffer.alloc(0);
    let stopped = false;
    let stderr: Buffer = Buffer.alloc(0);
    let spawnFailed = false;
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      child.kill('SIGKILL');
    };
    child.stdout.on('data', (chunk: Buffer) => {
      if (stopped) return;
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let newline = pending.indexOf(0x0a);
      while (newline !== -1 && !stopped) {
        const line = pending.subarray(0, newline);
        pending = pending.subarray(newline + 1);
        if (!options.onLine(line)) stop();
        newline = pending.indexOf(0x0a);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr = Buffer.concat([stderr, chunk]).subarray(0, MAX_STDERR_BYTES);
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.name === 'AbortError') return reject(abortError());
      if (error.code === 'ENOENT' || error.code === 'EACCES') {
        spawnFailed = true;
        return resolve(null);
      }
      reject(error);
    });
    child.on('close', (code) => {
      if (spawnFailed) return;
      if (options.signal.aborted) return reject(abortError());
      if (!stopped && pending.length > 0) options.onLine(pending);
      resolve({ code: stopped ? null : code, stderr: stderr.toString('utf8'), stopped });
    });
  });
}

function abortError(): Error {
  const error = new Error('The search was cancelled.');
  error.name = 'AbortError';
  return error;
}
