import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Tool, ToolKind } from '../../tools/tool.js';

type Hints = Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>>;

/**
 * MCP tool hints per kind. Conservative where a kind covers different tools:
 * `execute` and `other` may do anything, so they claim nothing safe. Reads
 * and searches stay inside the workspace (closed world); fetches reach the
 * network (open world).
 */
const HINTS: Record<ToolKind, Hints> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  search: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  fetch: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  edit: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  delete: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  move: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  execute: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  other: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};

/** The annotations `toolcell serve` lists for a tool, derived from its kind. */
export function toolAnnotations(tool: Tool<unknown>): ToolAnnotations {
  return { title: tool.displayName, ...HINTS[tool.kind] };
}
