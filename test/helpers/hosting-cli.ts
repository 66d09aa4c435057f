/**
 * The real `toolcell serve --tenants` as a child process, for tests that
 * kill it, restart it or read what it prints: started on a free port, its
 * MCP URL read from its start-up line, stopped (or killed) at teardown, and
 * tenant disk mounts a killed server left behind released.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mountsAt } from '../../src/backends/docker/disk-cap/mount-table.js';
import { TenantDisks } from '../../src/hosting/tenants/disk/tenant-disks.js';
import { cliPath } from './cli.js';
import { withSuiteEngineArgs } from './engine-priority.js';
import { eventually } from './docker.js';

export interface CliServer {
  child: ChildProcess;
  pid: number;
  /** The MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` and waits for the exit. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Teardown {
  teardown(fn: () => Promise<void>): void;
}

/**
 * `toolcell serve --http 127.0.0.1:0 --approval yolo ARGS` (ARGS holds
 * --tenants and the rest); resolves once it prints the URL it listens at,
 * rejects if it exits first or prints none within `timeoutMs`. At teardown
 * a live server gets SIGTERM (so it removes its containers and releases its
 * mounts), and SIGKILL if it has not exited 60 s later. `wrapper` runs it
 * through a command that execs it (e.g. `nice -n 3`).
 */
export async function startCliServer(t: Teardown, args: string[], timeoutMs = 120_000, wrapper: readonly string[] = []): Promise<CliServer> {
  const command = [...wrapper, process.execPath, cliPath, ...withSuiteEngineArgs(['serve', '--http', '127.0.0.1:0', '--approval', 'yolo', ...args])];
  const child = spawn(command[0]!, command.slice(1), {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stderr = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = once(child, 'exit').then(([code, signal]) => (exit = { code: code as number | null, signal: signal as NodeJS.Signals | null }));
  t.teardown(async () => {
    if (exit) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
  });
  child.stderr!.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`toolcell serve printed no URL in ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
      // "toolcell serve: hosting N tenant(s) over MCP Streamable HTTP at http://…/mcp (…)"
      const found = /over MCP Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(stderr);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`toolcell serve exited ${JSON.stringify(exit)}: ${stderr}`));
    });
  });
  return {
    child,
    pid: child.pid!,
    url,
    stderr: () => stderr,
    exited,
    stop: async (signal) => {
      if (!exit) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Releases the tenants' capped workspaces a killed server left mounted under
 * `dataDir` (root only; nothing to do otherwise): adopted, then unmounted and
 * detached as a server's own shutdown would. Registered first, it runs after
 * the servers' teardowns.
 */
export function releaseLeftDisks(t: Teardown, dataDir: string, tenants: readonly string[]): void {
  t.teardown(async () => {
    if (process.getuid?.() !== 0) return;
    const disks = await TenantDisks.open({ dataDir });
    for (const tenant of tenants) if ((await mountsAt(disks.workspacePath(tenant))).length > 0) await disks.prepare(tenant, {});
    await disks.releaseAll();
  });
}

/** Waits (a minute at most) for `pattern` in what the server printed; its first group. */
export async function printedBy(server: { stderr(): string }, pattern: RegExp): Promise<string> {
  let found: string | undefined;
  await eventually(async () => (found = pattern.exec(server.stderr())?.[1]) !== undefined, 60_000);
  if (found === undefined) throw new Error(`the server never printed ${pattern}: ${server.stderr()}`);
  return found;
}
