import type { Part, PartListUnion } from '@google/genai';
import type { ErrorCode } from '../errors.js';
import type { ToolCallRequest, ToolCallResponse } from './tool-call.js';

function functionResponsePart(callId: string, name: string, response: Record<string, unknown>): Part {
  return { functionResponse: { id: callId, name, response } };
}

/** The output of the functionResponse that leads a list of parts: Gemini wants a functionResponse first, and it has nothing to say. */
const LIST_LEAD_OUTPUT = 'Tool execution succeeded.';

function binaryLeadOutput(mimeType: string): string {
  return `Binary content of type ${mimeType} was processed.`;
}

/**
 * True when `parts` starts with the functionResponse convertToFunctionResponse
 * put before a list of parts or a media part only because Gemini's API wants
 * one first (`Tool execution succeeded.`, `Binary content of type … was
 * processed.`): it is no output of the tool, and a consumer that is not
 * Gemini (an MCP client) shows the parts after it alone.
 */
export function startsWithLeadResponse(parts: readonly Part[]): boolean {
  const [first, second] = parts;
  if (!first?.functionResponse || !second) return false;
  const response = first.functionResponse.response;
  if (!response || Object.keys(response).length !== 1 || typeof response['output'] !== 'string') return false;
  const output = response['output'];
  const mimeType = second.inlineData?.mimeType ?? second.fileData?.mimeType ?? 'unknown';
  return (
    output === LIST_LEAD_OUTPUT ||
    (parts.length === 2 && (second.inlineData !== undefined || second.fileData !== undefined) && output === binaryLeadOutput(mimeType))
  );
}

function toPart(value: string | Part): Part {
  return typeof value === 'string' ? { text: value } : value;
}

/**
 * Turns a tool's llmContent into the Parts sent back to the model (Gemini CLI's convertToFunctionResponse):
 * - a string (or a one-element list holding one) → one functionResponse with `{output}`;
 * - a Part that already is a functionResponse → passed through, with this call's id and name;
 * - a media Part (inlineData/fileData) → a functionResponse naming the binary content, then the part;
 * - a list of Parts → a functionResponse `Tool execution succeeded.` followed by the parts.
 * The functionResponse part always comes first.
 */
export function convertToFunctionResponse(toolName: string, callId: string, llmContent: PartListUnion): Part[] {
  const single = Array.isArray(llmContent) && llmContent.length === 1 ? llmContent[0]! : llmContent;

  if (typeof single === 'string') {
    return [functionResponsePart(callId, toolName, { output: single })];
  }
  if (Array.isArray(single)) {
    return [functionResponsePart(callId, toolName, { output: LIST_LEAD_OUTPUT }), ...single.map(toPart)];
  }
  if (single.functionResponse) {
    const existing = single.functionResponse;
    return [{ functionResponse: { ...existing, id: callId, name: toolName, response: existing.response ?? {} } }];
  }
  if (single.inlineData || single.fileData) {
    const mimeType = single.inlineData?.mimeType ?? single.fileData?.mimeType ?? 'unknown';
    return [functionResponsePart(callId, toolName, { output: binaryLeadOutput(mimeType) }), single];
  }
  if (typeof single.text === 'string') {
    return [functionResponsePart(callId, toolName, { output: single.text })];
  }
  return [functionResponsePart(callId, toolName, { output: LIST_LEAD_OUTPUT }), single];
}

/**
 * The response for a call that failed before or during execution:
 * `{error: message, errorType}`. Gemini CLI sends `{error: message}`; the
 * stable type is added so that whoever reads the parts (the model, `toolcell
 * exec --json`) can tell a policy refusal from a timeout without parsing
 * words, as the MCP `_meta`, stream-json, telemetry and audit lines can.
 */
export function createErrorResponse(
  request: ToolCallRequest,
  error: { message: string; type: ErrorCode },
  /** What the tool told the model beyond the message (e.g. a failed command's stdout, stderr and exit code). */
  output?: string,
): ToolCallResponse & { error: { message: string; type: ErrorCode } } {
  const response: Record<string, unknown> = { error: error.message, errorType: error.type };
  if (output) response['output'] = output;
  return {
    callId: request.callId,
    responseParts: [functionResponsePart(request.callId, request.name, response)],
    resultDisplay: error.message,
    error,
  };
}

/** The response for a cancelled call; partial output, when there was some, is kept for the model. */
export function createCancelledResponse(request: ToolCallRequest, reason: string, partialOutput?: string): ToolCallResponse {
  const response: Record<string, unknown> = { error: `[Operation Cancelled] ${reason}`, errorType: 'cancelled' };
  if (partialOutput) response['output'] = partialOutput;
  return {
    callId: request.callId,
    responseParts: [functionResponsePart(request.callId, request.name, response)],
    resultDisplay: partialOutput ? `${reason}\n${partialOutput}` : reason,
    error: { message: reason, type: 'cancelled' },
  };
}
