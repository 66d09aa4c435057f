import type { Part, PartListUnion } from '@google/genai';
import type { ErrorCode } from '../errors.js';
import type { ToolCallRequest, ToolCallResponse } from './tool-call.js';

function functionResponsePart(callId: string, name: string, response: Record<string, unknown>): Part {
  return { functionResponse: { id: callId, name, response } };
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
    return [functionResponsePart(callId, toolName, { output: 'Tool execution succeeded.' }), ...single.map(toPart)];
  }
  if (single.functionResponse) {
    const existing = single.functionResponse;
    return [{ functionResponse: { ...existing, id: callId, name: toolName, response: existing.response ?? {} } }];
  }
  if (single.inlineData || single.fileData) {
    const mimeType = single.inlineData?.mimeType ?? single.fileData?.mimeType ?? 'unknown';
    return [functionResponsePart(callId, toolName, { output: `Binary content of type ${mimeType} was processed.` }), single];
  }
  if (typeof single.text === 'string') {
    return [functionResponsePart(callId, toolName, { output: single.text })];
  }
  return [functionResponsePart(callId, toolName, { output: 'Tool execution succeeded.' }), single];
}

/** The response for a call that failed before or during execution (`{error: message}`, as Gemini CLI sends it). */
export function createErrorResponse(
  request: ToolCallRequest,
  error: { message: string; type: ErrorCode },
  /** What the tool told the model beyond the message (e.g. a failed command's stdout, stderr and exit code). */
  output?: string,
): ToolCallResponse & { error: { message: string; type: ErrorCode } } {
  const response: Record<string, unknown> = { error: error.message };
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
  const response: Record<string, unknown> = { error: `[Operation Cancelled] ${reason}` };
  if (partialOutput) response['output'] = partialOutput;
  return {
    callId: request.callId,
    responseParts: [functionResponsePart(request.callId, request.name, response)],
    resultDisplay: partialOutput ? `${reason}\n${partialOutput}` : reason,
    error: { message: reason, type: 'cancelled' },
  };
}
