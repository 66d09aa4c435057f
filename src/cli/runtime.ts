import { realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolcellError } from '../errors.js';
import { loadSettings } from '../config/load-settings.js';
import { shellCommandRunner } from '../discovery/shell-command-runner.js';
import { registerExtensionTools } from '../extensions.js';
import { registerShellTool } from '../tools/shell/register-shell-tool.js';
import { LazyShellSession } from './lazy-shell-session.js';
import { WorkerPool, type WorkerPoolOptions } from '../exec/worker-pool.js';
import { ToolRegistry } from '../registry/tool-registry.js';
import type { ApprovalMode } from '../scheduler/approval.js';
import { Scheduler, type SchedulerOptions } from '../scheduler/scheduler.js';
import type { TelemetrySink } from '../telemetry/events.js';
import type { WorkspaceInfo } from '../tools/define-tool.js';

/** Where shell commands run: a hardened container, the host (only when named), or docker-if-available-else-refuse. */
export type SandboxMode = 'docker' | 'none' | 'auto';

export interface RuntimeOptions {
  /** The workspace folder; every path is confined to it. */
  workspace: string;
  approvalMode?: ApprovalMode;
  sandbox?: SandboxMode;
  /** Wall-clock limit of one shell command, in seconds. */
  timeoutSeconds?: number;
  /** A settings file that overrides the workspace's and the user's. */
  settingsFile?: string;
  telemetry?: TelemetrySink;
  pool?: WorkerPoolOptions;
  /** Warnings while building the registry (e.g. a tool replaced). Default: stderr. */
  onWarning?: (message: string) => void;
}

/** Everything a command needs to run tool calls; close it when done. */
export interface Runtime {
  readonly workspace: WorkspaceInfo;
  readonly registry: ToolRegistry;
  readonly pool: WorkerPool;
  /** A scheduler over this runtime's registry, with its approval mode, telemetry and output limits. */
  createScheduler(options?: Partial<Omit<SchedulerOptions, 'registry'>>): Scheduler;
  /** Closers run by `close`, last registered first (shell sessions, MCP clients…). */
  onClose(closer: () => Promise<void>): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Resolves a workspace folder to its real path, or throws `invalid_workspace`. */
export async function resolveWorkspace(dir: string): Promise<WorkspaceInfo> {
  let root: string;
  try {
    root = await realpath(dir);
    if (!(await stat(root)).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    throw new ToolcellError('invalid_workspace', `Workspace ${JSON.stringify(dir)} is not an existing folder (${(error as Error).message}).`);
  }
  return { roots: [root], stateDir: join(root, '.toolcell') };
}

/**
 * Builds the registry (built-in tools executing in a worker pool, the shell
 * tool, discovered and MCP tools) for one workspace.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const workspace = await resolveWorkspace(options.workspace);
  const onWarning = options.onWarning ?? ((message: string) => process.stderr.write(`toolcell: ${message}\n`));
  const registry = new ToolRegistry({ onWarning });
  const pool = new WorkerPool(options.pool);
  const closers: Array<() => Promise<void>> = [() => pool.close()];

  const runtime: Runtime = {
    workspace,
    registry,
    pool,
    createScheduler: (schedulerOptions = {}) =>
      new Scheduler({
        registry,
        approvalMode: options.approvalMode ?? 'default',
        ...(options.telemetry ? { telemetry: options.telemetry } : {}),
        output: { saveDir: join(workspace.stateDir, 'tool-outputs') },
        ...schedulerOptions,
      }),
    onClose: (closer) => closers.push(closer),
    async close() {
      while (closers.length > 0) await closers.pop()!().catch(() => {});
    },
    [Symbol.asyncDispose]: () => runtime.close(),
  };

  try {
    for (const tool of await pool.createTools({ workspace })) registry.register(tool);
    const root = workspace.roots[0]!;
    const settings = loadSettings({ workspace: root, ...(options.settingsFile ? { settingsFile: options.settingsFile } : {}) });
    // One sandbox session per runtime, opened on the first command; fail closed (see ShellService.openSession).
    const shellSession = new LazyShellSession({ sandbox: options.sandbox ?? 'auto', workspaceRoot: root });
    closers.push(() => shellSession.close());
    registerShellTool(registry, {
      session: shellSession,
      workspace,
      ...(options.timeoutSeconds !== undefined ? { wallTimeoutMs: options.timeoutSeconds * 1000 } : {}),
    });
    // Discovered and MCP tools (issue 5); problems (an unreachable server…) are warnings, not failures.
    const extensions = await registerExtensionTools({ registry, settings, workspace: root, commandRunner: shellCommandRunner(shellSession) });
    closers.push(() => extensions.close());
    for (const problem of extensions.problems) onWarning(problem);
  } catch (error) {
    await runtime.close();
    throw error;
  }
  return runtime;
}
