import { z } from 'zod';
import { functionOption, objectWithMethods, parseOptions } from '../contracts/parse-options.js';
import { SANDBOX_MODES } from '../contracts/sandbox-mode.js';
import { workspaceInfoOption } from '../contracts/workspace-info.js';
import { DiscoveredTool } from '../discovery/discovered-tool.js';
import { shellCommandRunner } from '../discovery/shell-command-runner.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import type { SandboxMode } from '../shell/run-types.js';
import type { OpenSessionOptions } from '../shell/shell-service-options.js';
import type { ShellService } from '../shell/shell-service.js';
import type { WorkspaceInfo } from '../tools/define-tool.js';
import { createShellTool } from '../tools/shell/shell-tool.js';
import type { SessionSandbox } from './mcp-session-factory.js';

export interface ShellSandboxOptions {
  service: ShellService;
  sandbox: SandboxMode;
  workspace: WorkspaceInfo;
  /** Its discovered tools are re-bound to each session's sandbox. */
  baseRegistry: ToolRegistry;
  inactivityTimeoutMs?: number;
  wallTimeoutMs?: number;
  /** Each session's container limits over the service's (a hosting tenant's memory, CPUs, pids). */
  limits?: OpenSessionOptions['limits'];
  /** False: a session opens before its container is up, and its first command waits for it (OpenSessionOptions.awaitSandbox). */
  awaitSandbox?: boolean;
  /** The secrets each new session's commands get (OpenSessionOptions.secrets), asked for at each session's opening. */
  secrets?: () => Readonly<Record<string, string>> | undefined;
}

/** Checks ShellSandboxOptions (above) at once, so a bad one fails the server's start, not its first session. */
const shellSandboxOptionsSchema = z.strictObject({
  service: objectWithMethods<ShellService>('openSession'),
  sandbox: z.enum(SANDBOX_MODES, { error: `must be one of ${SANDBOX_MODES.join(', ')}` }),
  workspace: workspaceInfoOption,
  baseRegistry: objectWithMethods<ToolRegistry>('list'),
  // The shell tool's own bounds (shell-tool.ts).
  inactivityTimeoutMs: z.number().min(0).optional(),
  wallTimeoutMs: z.number().positive().optional(),
  // Checked by the shell service when each session opens, against the backend's bounds.
  limits: z.custom<OpenSessionOptions['limits']>((value) => typeof value === 'object' && value !== null, { error: 'must be an object' }).optional(),
  awaitSandbox: z.boolean().optional(),
  secrets: functionOption<() => Readonly<Record<string, string>> | undefined>().optional(),
});

/** The id of the shell session (and the label of the container) that an MCP session's commands run in. */
export function shellSessionIdOf(mcpSessionId: string): string {
  return `mcp-${mcpSessionId}`;
}

/**
 * Opens, for one MCP session, a shell session of its own and the tools bound
 * to it: `run_shell_command` and a copy of every discovered tool. Tenants
 * thus never share processes, background jobs or /tmp; closing the MCP
 * session kills whatever its commands left running.
 */
export function shellSessionSandbox(options: ShellSandboxOptions): (sessionId: string) => Promise<SessionSandbox> {
  parseOptions(shellSandboxOptionsSchema, options, 'shellSessionSandbox');
  const root = options.workspace.roots[0]!;
  return async (sessionId) => {
    const secrets = options.secrets?.();
    const session = await options.service.openSession({
      ...(secrets && Object.keys(secrets).length > 0 ? { secrets: { ...secrets } } : {}),
      sandbox: options.sandbox,
      workspaceRoot: root,
      sessionId: shellSessionIdOf(sessionId),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.awaitSandbox !== undefined ? { awaitSandbox: options.awaitSandbox } : {}),
    });
    const runner = shellCommandRunner(session);
    const shell = createShellTool({
      session,
      workspace: options.workspace,
      ...(options.inactivityTimeoutMs !== undefined ? { inactivityTimeoutMs: options.inactivityTimeoutMs } : {}),
      ...(options.wallTimeoutMs !== undefined ? { wallTimeoutMs: options.wallTimeoutMs } : {}),
    });
    const discovered = options.baseRegistry
      .list()
      .filter((tool): tool is DiscoveredTool => tool instanceof DiscoveredTool)
      .map((tool) => tool.withRunner(runner));
    return { tools: [shell, ...discovered], close: () => session.close() };
  };
}
