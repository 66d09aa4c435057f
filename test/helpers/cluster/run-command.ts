/**
 * Running the host commands the cluster harness is made of (ip, mount,
 * docker against one node's socket), each with a time limit, and an error
 * that carries what the command said on stderr.
 */
import { spawn } from 'node:child_process';

/** What a command printed, once it exited 0. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Killed (SIGKILL) after this long; the call then fails. Default 120 s. */
  timeoutMs?: number;
  /** Written to the command's stdin, which is then closed. */
  input?: string;
  /** Extra environment. */
  env?: NodeJS.ProcessEnv;
}

/** Runs `command args…`; resolves on exit 0, rejects with stderr otherwise. */
export function runCommand(command: string, args: readonly string[], options: RunOptions = {}): Promise<CommandOutput> {
  const { timeoutMs = 120_000, input, env } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString();
      const stderr = Buffer.concat(err).toString();
      if (code === 0) return resolve({ stdout, stderr });
      const why = signal !== null ? `killed by ${signal}${signal === 'SIGKILL' ? ` (time limit ${timeoutMs} ms?)` : ''}` : `exit ${code}`;
      reject(new Error(`${command} ${args.join(' ')}: ${why}: ${stderr.trim().slice(-2000)}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

/** Like runCommand, but resolves with the exit code instead of failing on a non-zero one. */
export function tryCommand(command: string, args: readonly string[], options: RunOptions = {}): Promise<CommandOutput & { ok: boolean }> {
  return runCommand(command, args, options).then(
    (output) => ({ ...output, ok: true }),
    (error: Error) => ({ stdout: '', stderr: error.message, ok: false }),
  );
}

/** `a | b`: the first command's stdout into the second's stdin; fails when either fails. */
export function pipeCommands(first: [string, string[]], second: [string, string[]], timeoutMs = 300_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const a = spawn(first[0], first[1], { stdio: ['ignore', 'pipe', 'pipe'] });
    const b = spawn(second[0], second[1], { stdio: ['pipe', 'ignore', 'pipe'] });
    a.stdout.pipe(b.stdin);
    const errors: string[] = [];
    a.stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString()));
    b.stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString()));
    const timer = setTimeout(() => {
      a.kill('SIGKILL');
      b.kill('SIGKILL');
    }, timeoutMs);
    let pending = 2;
    let failed = false;
    const done = (name: string) => (code: number | null) => {
      if (code !== 0) failed = true;
      if (code !== 0) errors.push(`${name} exited ${code}`);
      if (--pending > 0) return;
      clearTimeout(timer);
      if (failed) reject(new Error(`${first[0]} | ${second[0]}: ${errors.join(' ').trim().slice(-2000)}`));
      else resolve();
    };
    a.on('close', done(first[0]));
    b.on('close', done(second[0]));
  });
}

/** Polls `probe` until it returns a value (not undefined), or fails after the backstop with the last error. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, backstopMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + backstopMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
