import type { CommandRunner, CommandRunResult } from './command-runner.js';

/**
 * The part of the shell service's session handle (`ShellSessionHandle`)
 * that discovery uses: run a command with pipes and stdin in the session's
 * sandbox. Written structurally so that any session with this `run` fits.
 */
export interface PipesShellSession {
  describe(): string;
  run(options: {
    command: string;
    cwd?: string;
    mode?: 'pty' | 'pipes';
    stdin?: string | Uint8Array;
    timeouts?: { inactivityMs?: number; wallMs?: number };
    signal?: AbortSignal;
  }): Promise<{
    stdout?: string;
    stderr?: string;
    exitCode: number | null;
    signal: string | null;
    aborted: boolean;
    timedOut: string | null;
    truncated: boolean;
    totalBytes: number;
  }>;
}

/**
 * Discovery's CommandRunner on top of a shell session: commands run where
 * the session runs them (the Docker sandbox with the workspace mounted, by
 * default), in pipes mode with the payload on stdin, limited by wall time
 * (the inactivity limit is off: a call may legitimately compute in silence),
 * and killed down to the last process on abort or timeout.
 */
export function shellCommandRunner(session: PipesShellSession): CommandRunner {
  if (typeof session?.run !== 'function' || typeof session.describe !== 'function') {
    throw new TypeError('shellCommandRunner: session must be a shell session handle');
  }
  return {
    describe: () => session.describe(),
    async run(request): Promise<CommandRunResult> {
      const result = await session.run({
        command: request.command,
        cwd: request.cwd ?? '',
        mode: 'pipes',
        stdin: request.stdin ?? '',
        timeouts: { inactivityMs: 0, wallMs: request.timeoutMs },
        ...(request.signal ? { signal: request.signal } : {}),
      });
      return {
        stdout: result.stdout ?? '',
        stderr: result.stderr ?? '',
        exitCode: result.exitCode,
        signal: result.signal,
        aborted: result.aborted,
        timedOut: result.timedOut !== null,
        truncated: result.truncated || result.totalBytes > request.maxOutputBytes,
      };
    },
  };
}
