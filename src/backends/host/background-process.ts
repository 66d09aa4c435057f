import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { ExitStatus, SpawnedProcess } from '../backend.js';
import { killProcessTree } from './process-tree.js';
import { pipeShellArgs } from './shell-command.js';

export interface BackgroundSpawnOptions {
  shell: string;
  command: string;
  cwd: string;
  env: Record<string, string>;
  /** File that receives stdout and stderr. */
  logPath: string;
  envMarker: string;
}

/**
 * Starts a command that outlives the call: its own session, stdin from
 * /dev/null, stdout and stderr appended to `logPath`. It does not keep the
 * thread alive; the session kills it when it closes.
 */
export function spawnBackgroundProcess(options: BackgroundSpawnOptions): Promise<SpawnedProcess> {
  const log = openSync(options.logPath, 'a', 0o600);
  try {
    const child = spawn(options.shell, pipeShellArgs(options.shell, options.command), {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', log, log],
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.off('error', reject);
        child.unref();
        const pid = child.pid!;
        const exited = new Promise<ExitStatus>((settle) => {
          child.once('exit', (code, signal) => settle({ exitCode: code, signal }));
        });
        const selector = { rootPid: pid, envMarker: options.envMarker };
        resolve({
          pid,
          logPath: options.logPath,
          onData: () => {},
          exited,
          kill: (killOptions) => killProcessTree(selector, killOptions?.graceMs === undefined ? {} : { graceMs: killOptions.graceMs }),
        });
      });
    });
  } finally {
    // The child has its own copy of the descriptor.
    closeSync(log);
  }
}
