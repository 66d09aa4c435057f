import type { ToolRegistry } from '../../registry/tool-registry.js';

/**
 * What one MCP session of `toolcell serve` owns: its registry, in which the
 * tools that run commands (run_shell_command, discovered tools) are bound to
 * a sandbox session of its own, so tenants never share processes or /tmp.
 */
export interface ServeSession {
  registry: ToolRegistry;
  /** Ends everything the session started (its sandbox session included). */
  close(): Promise<void>;
}

/** Opens the resources of a new MCP session. */
export type ServeSessionFactory = (sessionId: string) => Promise<ServeSession>;
