import { randomBytes } from 'node:crypto';
import type { FunctionCall } from '@google/genai';
import type { ToolCallRequest } from '../scheduler/tool-call.js';

/**
 * A call id for a FunctionCall the API sent without one (as Gemini CLI does:
 * `${name}-${Date.now()}-${random}`), unique within the process.
 */
export function generateCallId(name: string): string {
  return `${name}-${Date.now()}-${randomBytes(6).toString('hex')}`;
}

/**
 * The scheduler's request for one FunctionCall. A nameless call keeps the
 * name `undefined_tool_name` so the scheduler answers it with
 * `tool_not_registered` rather than the loop dropping it silently; absent
 * args become `{}`.
 */
export function toToolCallRequest(call: FunctionCall): ToolCallRequest {
  const name = call.name || 'undefined_tool_name';
  const args = call.args && typeof call.args === 'object' && !Array.isArray(call.args) ? (call.args as Record<string, unknown>) : {};
  return { callId: call.id || generateCallId(name), name, args };
}
