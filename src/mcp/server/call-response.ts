import type { Part } from '@google/genai';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startsWithLeadResponse } from '../../scheduler/function-response.js';
import type { CompletedToolCall } from '../../scheduler/tool-call.js';

type ContentBlock = CallToolResult['content'][number];

/**
 * Turns a finished call into an MCP CallToolResult: the functionResponse's
 * `output` (and `error`) become text, media parts become image/audio
 * content (other types an embedded blob resource). Anything but success is
 * `isError: true`, with the error type in `_meta` so clients can branch on
 * it (`invalid_tool_params`, `confirmation_required`, `cancelled`, …).
 * The functionResponse that leads a list of parts only because Gemini wants
 * one first (`Tool execution succeeded.`) is not the tool's output and is
 * left out: the client gets the parts themselves.
 */
export function completedCallToResult(call: CompletedToolCall): CallToolResult {
  const content: ContentBlock[] = [];
  const parts = call.response.responseParts;
  for (const part of startsWithLeadResponse(parts) ? parts.slice(1) : parts) content.push(...partToContent(part));
  if (content.length === 0) content.push({ type: 'text', text: '(no output)' });
  const result: CallToolResult = { content };
  if (call.status !== 'success') {
    result.isError = true;
    result._meta = { 'toolcell/errorType': call.response.error?.type ?? call.status };
  }
  return result;
}

function partToContent(part: Part): ContentBlock[] {
  if (part.functionResponse) {
    const response = (part.functionResponse.response ?? {}) as Record<string, unknown>;
    const blocks: ContentBlock[] = [];
    if (response['error'] !== undefined) blocks.push({ type: 'text', text: asText(response['error']) });
    if (response['output'] !== undefined) blocks.push({ type: 'text', text: asText(response['output']) });
    if (blocks.length === 0) blocks.push({ type: 'text', text: JSON.stringify(response) });
    return blocks;
  }
  if (part.inlineData?.data !== undefined) {
    const mimeType = part.inlineData.mimeType ?? 'application/octet-stream';
    const data = part.inlineData.data;
    if (mimeType.startsWith('image/')) return [{ type: 'image', data, mimeType }];
    if (mimeType.startsWith('audio/')) return [{ type: 'audio', data, mimeType }];
    return [{ type: 'resource', resource: { uri: `toolcell://inline/${mimeType}`, mimeType, blob: data } }];
  }
  if (part.fileData?.fileUri) {
    return [
      {
        type: 'resource_link',
        uri: part.fileData.fileUri,
        name: part.fileData.displayName ?? part.fileData.fileUri,
        ...(part.fileData.mimeType ? { mimeType: part.fileData.mimeType } : {}),
      },
    ];
  }
  if (typeof part.text === 'string') return [{ type: 'text', text: part.text }];
  return [];
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
