import type { WorkBudget } from '../../contracts/work-budget.js';
import type { ToolRegistry } from '../../registry/tool-registry.js';
import type { AroundToolCall, SessionSchedulerSettings } from './create-tool-server.js';

/**
 * What one MCP session of `toolcell serve` owns: its registry, in which the
 * tools that run commands (run_shell_command, discovered tools) are bound to
 * a sandbox session of its own, so tenants never share processes or /tmp.
 */
export interface ServeSession {
  registry: ToolRegistry;
  /** How its calls are scheduled, over the server's scheduler settings: see SessionSchedulerSettings. */
  scheduler?: SessionSchedulerSettings;
  /** Ends everything the session started (its sandbox session included). */
  close(): Promise<void>;
  /** Wraps each tool call (limits, queueing, recording); see ToolServerOptions.aroundCall. */
  aroundCall?: AroundToolCall;
  /** Closes the session after this long without a request (over HTTP; overrides the server's default). */
  idleMs?: number;
  /** Closes the session after this long without a request and without an open event stream: its client is gone (over HTTP; overrides the server's default). */
  abandonedMs?: number;
  /** Closes the session this long after it opened, busy or not (over HTTP). */
  maxLifetimeMs?: number;
  /** What encoding its large answers on the server's shared thread is charged to (a hosting tenant's serverCpu share; over HTTP). */
  budget?: WorkBudget;
}

/**
 * Opens the resources of a new MCP session. `caller` is who opened it, as
 * the HTTP server's `authenticate` said (absent over stdio and with the
 * single shared token).
 */
export type ServeSessionFactory<Caller = unknown> = (sessionId: string, caller?: Caller) => Promise<ServeSession>;
