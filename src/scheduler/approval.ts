import type { Tool, ToolConfirmationDetails, ToolConfirmationOutcome } from '../tools/tool.js';
import { EDIT_KINDS, READ_ONLY_KINDS } from '../tools/tool.js';
import type { ApprovalMode } from '../contracts/approval-mode.js';

export { APPROVAL_MODES, isApprovalMode, type ApprovalMode } from '../contracts/approval-mode.js';

/** Whether the mode lets this tool run at all (before confirmation is considered). */
export function allowedByMode(mode: ApprovalMode, tool: Tool<unknown>): boolean {
  return mode !== 'plan' || READ_ONLY_KINDS.has(tool.kind);
}

/** Whether the mode approves these confirmation details without asking. */
export function approvedByMode(mode: ApprovalMode, tool: Tool<unknown>, details: ToolConfirmationDetails): boolean {
  if (mode === 'yolo') return true;
  if (mode === 'autoEdit') return details.type === 'edit' && EDIT_KINDS.has(tool.kind);
  return false;
}

/**
 * What the user approved "always" during this session. `proceed_always` is
 * narrowed to the tool (and for commands, to the root command);
 * `proceed_always_server` covers every tool of an MCP server;
 * `proceed_always_tool` one MCP tool.
 */
export class ApprovalMemory {
  readonly #keys = new Set<string>();

  remember(toolName: string, details: ToolConfirmationDetails, outcome: ToolConfirmationOutcome): void {
    if (outcome === 'proceed_always_server' && details.type === 'mcp') {
      this.#keys.add(`mcp-server:${details.serverName}`);
    } else if (outcome === 'proceed_always_tool' && details.type === 'mcp') {
      this.#keys.add(`mcp-tool:${details.serverName}/${details.toolName}`);
    } else if (outcome === 'proceed_always' || outcome === 'proceed_always_tool') {
      this.#keys.add(ApprovalMemory.#toolKey(toolName, details));
    }
  }

  isApproved(toolName: string, details: ToolConfirmationDetails): boolean {
    if (details.type === 'mcp') {
      return (
        this.#keys.has(`mcp-server:${details.serverName}`) ||
        this.#keys.has(`mcp-tool:${details.serverName}/${details.toolName}`) ||
        this.#keys.has(ApprovalMemory.#toolKey(toolName, details))
      );
    }
    return this.#keys.has(ApprovalMemory.#toolKey(toolName, details));
  }

  static #toolKey(toolName: string, details: ToolConfirmationDetails): string {
    return details.type === 'exec' ? `exec:${toolName}:${details.rootCommand}` : `tool:${toolName}`;
  }
}
