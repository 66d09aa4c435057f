import { ToolRegistry } from '../registry/tool-registry.js';
import type { Tool } from '../tools/tool.js';
import type { ServeSessionFactory } from '../mcp/server/session.js';

/** The tools of one session that need a sandbox of their own, and how to end that sandbox. */
export interface SessionSandbox {
  /** Replace the base registry's tools of the same names (run_shell_command, discovered tools…). */
  tools: Tool<unknown>[];
  close(): Promise<void>;
}

export interface SessionFactoryOptions {
  /** The runtime's registry: built-in, MCP and discovered tools, shared by all sessions. */
  baseRegistry: ToolRegistry;
  /** Opens a sandbox session for a new MCP session; absent when no tool needs one. */
  openSandbox?: (sessionId: string) => Promise<SessionSandbox>;
}

/**
 * Makes `toolcell serve`'s sessions: each gets a registry holding the base
 * registry's tools, except that tools bound to a sandbox session are
 * replaced by copies bound to the session's own sandbox. Built-in file
 * tools and MCP tools hold no per-tenant state and are shared.
 */
export function createSessionFactory(options: SessionFactoryOptions): ServeSessionFactory {
  return async (sessionId) => {
    const sandbox = await options.openSandbox?.(sessionId);
    const registry = new ToolRegistry({ onWarning: () => {} });
    const replaced = new Set(sandbox?.tools.map((tool) => tool.name));
    for (const tool of options.baseRegistry.list()) if (!replaced.has(tool.name)) registry.register(tool);
    for (const tool of sandbox?.tools ?? []) registry.register(tool);
    return { registry, close: async () => sandbox?.close() };
  };
}
