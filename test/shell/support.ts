import type { ExecutionContext } from 'ava';
import { randomInt } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { ShellService, type ShellServiceOptions } from '../../src/shell/shell-service.js';
import type { ShellSessionHandle } from '../../src/shell/session-handle.js';
import type { SandboxMode } from '../../src/shell/run-types.js';
import { useTempWorkspace, type TempWorkspace } from '../helpers/workspace.js';

/** A ShellService (a real shell thread) closed when the test ends. */
export async function useShellService(t: ExecutionContext, options: ShellServiceOptions = {}): Promise<ShellService> {
  const service = await ShellService.create(options);
  t.teardown(() => service.close());
  return service;
}

/** A temp workspace and a session on it (host unless told otherwise), with a service of its own. */
export async function useShellSession(
  t: ExecutionContext,
  options: { service?: ShellServiceOptions; sandbox?: SandboxMode } = {},
): Promise<{ service: ShellService; session: ShellSessionHandle; workspace: TempWorkspace }> {
  const workspace = useTempWorkspace(t);
  const service = await useShellService(t, options.service);
  const session = await service.openSession({ sandbox: options.sandbox ?? 'none', workspaceRoot: workspace.root });
  return { service, session, workspace };
}

/**
 * A number no other process on the machine has in its command line, used as
 * `sleep <token>` (GNU sleep takes fractions) to find a test's processes.
 */
export function uniqueSleepToken(): string {
  return `${randomInt(5000, 9000)}.${randomInt(100000, 999999)}`;
}

/** PIDs of live (non-zombie) processes whose command line contains `token`. */
export function processesWith(token: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1');
      if (!cmdline.includes(token)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** An AbortController aborted once live output matches `pattern`. */
export function abortWhenOutput(pattern: RegExp): { signal: AbortSignal; onOutput: (output: unknown) => void } {
  const controller = new AbortController();
  return {
    signal: controller.signal,
    onOutput: (output) => {
      if (typeof output === 'string' && pattern.test(output)) controller.abort();
    },
  };
}
