import { randomBytes } from 'node:crypto';
import { constants } from 'node:os';
import { createRequire } from 'node:module';
import type * as NodePty from 'node-pty';
import type { ExitStatus, SpawnedProcess } from '../backend.js';
import { ChunkFanout } from './chunk-fanout.js';
import { EndMarkerScanner } from './end-marker.js';
import { killProcessTree } from './process-tree.js';
import { ptyShellArgs } from './shell-command.js';

// node-pty is CommonJS with a native addon; load it the CommonJS way.
const pty = createRequire(import.meta.url)('node-pty') as typeof NodePty;

export interface PtySpawnOptions {
  shell: string;
  command: string;
  /** Absolute, already confined working directory. */
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** `NAME=value` in `env` that marks this command's processes. */
  envMarker: string;
}

/**
 * Starts a command in a fresh PTY on the host. Must run in the shell thread:
 * node-pty is not safe to use from several threads.
 */
export function spawnPtyProcess(options: PtySpawnOptions): SpawnedProcess {
  const endMarker = `\x1b]7770;toolcell-end-${randomBytes(8).toString('hex')}\x07`;
  const terminal = pty.spawn(options.shell, ptyShellArgs(options.shell, options.command, endMarker), {
    name: options.env.TERM ?? 'xterm-256color',
    cols: options.cols,
    rows: options.rows,
    cwd: options.cwd,
    env: options.env,
    encoding: null,
  });
  const fanout = new ChunkFanout();
  const scanner = new EndMarkerScanner(endMarker);
  terminal.onData((chunk) => {
    const { data, marker } = scanner.push(chunk as unknown as Buffer);
    if (data.length > 0) fanout.emit(data, 'stdout');
    // Everything before the marker has been read: let the wrapper exit.
    if (marker) terminal.write('\n');
  });
  // node-pty reports the exit once the PTY has been drained (or 200 ms after
  // the exit, when a leftover child holds the terminal open).
  const exited = new Promise<ExitStatus>((resolve) => {
    terminal.onExit(({ exitCode, signal }) => {
      const rest = scanner.flush();
      if (rest.length > 0) fanout.emit(rest, 'stdout');
      resolve(signal ? { exitCode: null, signal: signalName(signal) } : { exitCode, signal: null });
    });
  });
  const selector = { rootPid: terminal.pid, envMarker: options.envMarker };
  return {
    pid: terminal.pid,
    onData: (listener) => fanout.add(listener),
    exited,
    kill: (killOptions) => killProcessTree(selector, killOptions?.graceMs === undefined ? {} : { graceMs: killOptions.graceMs }),
  };
}

/** `SIGKILL` for 9; the number as a string when the name is unknown. */
export function signalName(signal: number): string {
  for (const [name, value] of Object.entries(constants.signals)) if (value === signal) return name;
  return String(signal);
}
