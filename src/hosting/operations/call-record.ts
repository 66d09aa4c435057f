import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCallRun } from '../../mcp/server/create-tool-server.js';
import type { ToolCallDecision } from '../../contracts/tool-call-decision.js';
import type { CallOutcome, HostingEvent } from './hosting-events.js';

/**
 * The audit line's `decision`: `allow` when the call was let run (by a policy
 * rule or the approval mode), `deny` when it was refused before it ran (a
 * policy deny, a confirmation nobody can give, a limit, a call that was not
 * valid). The scheduler's finer values (`auto`, `accept`, `denied`, …) are
 * telemetry's; an operator reading the audit log asks only which of the two.
 */
export type AuditDecision = 'allow' | 'deny';

function auditDecision(decision: ToolCallDecision | undefined, outcome: CallOutcome): AuditDecision {
  if (outcome === 'denied' || decision === 'denied' || decision === 'reject') return 'deny';
  return decision === undefined ? (outcome === 'cancelled' ? 'deny' : 'allow') : 'allow';
}

/** Error types that mean the call was refused before it ran. */
const REFUSALS = new Set(['policy_denied', 'policy_violation', 'confirmation_required', 'quota_exceeded']);

/** The `tool_call` event of a finished (or refused) call. */
export function toolCallEvent(fields: {
  tenant: string;
  session: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  durationMs: number;
  result: CallToolResult;
  run?: ToolCallRun;
}): Extract<HostingEvent, { event: 'tool_call' }> {
  const errorType = fields.result.isError ? String(fields.result._meta?.['toolcell/errorType'] ?? 'error') : undefined;
  const status = fields.run?.completed.status;
  const outcome: CallOutcome =
    errorType !== undefined && REFUSALS.has(errorType) ? 'denied' : status === 'cancelled' ? 'cancelled' : fields.result.isError ? 'error' : 'success';
  const text = fields.result.content.map((block) => ('text' in block && typeof block.text === 'string' ? block.text : '')).join('\n');
  const exit = /^Exit Code: (-?\d+)$/m.exec(text);
  return {
    event: 'tool_call',
    tenant: fields.tenant,
    session: fields.session,
    callId: fields.callId,
    tool: fields.tool,
    args: fields.args,
    decision: auditDecision(fields.run?.completed.decision, outcome),
    outcome,
    ...(errorType !== undefined ? { errorType } : {}),
    ...(exit ? { exitCode: Number(exit[1]) } : {}),
    durationMs: fields.durationMs,
    outputBytes: Buffer.byteLength(text),
  };
}

/** A tool error result with a stable type, as the scheduler's own errors look over MCP. */
export function toolErrorResult(type: string, message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true, _meta: { 'toolcell/errorType': type } };
}
