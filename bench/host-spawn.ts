/**
 * The unsandboxed baselines a user compares the sandbox with: `bash -c true`
 * started on the host, as Gemini CLI does by default, through child_process
 * (pipes) and through node-pty (a terminal).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type * as NodePty from 'node-pty';

// node-pty is CommonJS with a native addon; load it the CommonJS way.
const pty = createRequire(import.meta.url)('node-pty') as typeof NodePty;

/** `bash -c true` through child_process.spawn with pipes; resolves once its stdio closed. */
export function hostSpawnTrue(env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', 'true'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', () => resolve());
  });
}

/** `bash -c true` in a fresh PTY through node-pty; resolves on its exit. */
export function hostPtyTrue(env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve) => {
    const terminal = pty.spawn('bash', ['-c', 'true'], { name: 'xterm-256color', cols: 80, rows: 24, cwd: process.cwd(), env });
    terminal.onData(() => undefined);
    terminal.onExit(() => resolve());
  });
}
