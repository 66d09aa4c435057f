import { spawn } from 'node:child_process';
import type { ExitStatus, SpawnedProcess } from '../backend.js';
import { ChunkFanout } from './chunk-fanout.js';
import { killProcessTree } from './process-tree.js';
import { pipeShellArgs } from './shell-command.js';

/** After the exit, how long a leftover child may keep the pipes open before they are closed. */
const DRAIN_AFTER_EXIT_MS = 200;

export interface PipeSpawnOptions {
  shell: string;
  command: string;
  /** Absolute, already confined working directory. */
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  stdin?: Uint8Array;
  /** `NAME=value` in `env` that marks this command's processes. */
  envMarker: string;
}

/**
 * Starts a command with separate stdout/stderr pipes, in a session of its
 * own (`detached`), so its process group can be found and killed.
 */
export function spawnPipeProcess(options: PipeSpawnOptions): Promise<SpawnedProcess> {
  const child = spawn(options.shell, pipeShellArgs(options.shell, options.command), {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      child.off('error', reject);
      const pid = child.pid!;
      const fanout = new ChunkFanout();
      let lastDataAt = 0;
      child.stdout.on('data', (chunk: Buffer) => ((lastDataAt = Date.now()), fanout.emit(chunk, 'stdout')));
      child.stderr.on('data', (chunk: Buffer) => ((lastDataAt = Date.now()), fanout.emit(chunk, 'stderr')));
      // A command that does not read its stdin makes the write fail with EPIPE: not an error of ours.
      child.stdin.on('error', () => {});
      if (options.stdin && options.stdin.length > 0) child.stdin.end(options.stdin);
      else child.stdin.end();

      const exited = new Promise<ExitStatus>((settle) => {
        let status: ExitStatus | undefined;
        let drainTimer: NodeJS.Timeout | undefined;
        child.once('exit', (code, signal) => {
          status = { exitCode: code, signal };
          // A leftover child holding stdout open must not keep the call open. The pipes are
          // closed only after an I/O poll (setImmediate runs after it) has found no new output
          // (on a busy event loop the timer can expire before output already written was read),
          // and at the latest 10 drain periods after the exit (a leftover child that keeps writing).
          const giveUpAt = Date.now() + 10 * DRAIN_AFTER_EXIT_MS;
          const arm = (): void => {
            drainTimer = setTimeout(() => {
              setImmediate(() => {
                if (Date.now() - lastDataAt < DRAIN_AFTER_EXIT_MS && Date.now() < giveUpAt) return arm();
                child.stdout.destroy();
                child.stderr.destroy();
              });
            }, DRAIN_AFTER_EXIT_MS);
          };
          arm();
        });
        child.once('close', (code, signal) => {
          if (drainTimer) clearTimeout(drainTimer);
          settle(status ?? { exitCode: code, signal });
        });
      });
      const selector = { rootPid: pid, envMarker: options.envMarker };
      resolve({
        pid,
        onData: (listener) => fanout.add(listener),
        exited,
        kill: (killOptions) => killProcessTree(selector, killOptions?.graceMs === undefined ? {} : { graceMs: killOptions.graceMs }),
      });
    });
  });
}
