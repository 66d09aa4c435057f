import type { Part } from '@google/genai';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolErrorType } from '../errors.js';
import type { ToolResult } from '../tools/tool.js';

/**
 * Converts an MCP CallToolResult into a ToolResult: text blocks become text
 * (one string when there is nothing else), images and audio become
 * `inlineData` parts, embedded resources their text or `inlineData`, links a
 * line naming them. `structuredContent` is kept as a JSON text part unless a
 * text block already carries the same JSON (as the spec asks servers to
 * do). `isError` makes it an `mcp_tool_error` result whose message is the
 * server's text.
 */
export function callResultToToolResult(result: CallToolResult, context: { toolName: string; serverName: string }): ToolResult {
  const parts: Part[] = [];
  const display: string[] = [];
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        parts.push({ text: block.text });
        display.push(block.text);
        break;
      case 'image':
      case 'audio':
        parts.push({ inlineData: { mimeType: block.mimeType, data: block.data } });
        display.push(`[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`);
        break;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource && typeof resource.text === 'string') {
          parts.push({ text: resource.text });
          display.push(resource.text);
        } else if ('blob' in resource && typeof resource.blob === 'string') {
          const mimeType = resource.mimeType ?? 'application/octet-stream';
          parts.push({ inlineData: { mimeType, data: resource.blob } });
          display.push(`[resource ${resource.uri}: ${mimeType}, ${base64Bytes(resource.blob)} bytes]`);
        }
        break;
      }
      case 'resource_link': {
        const line = `Resource link: ${block.name} (${block.uri})${block.description ? ` - ${block.description}` : ''}`;
        parts.push({ text: line });
        display.push(line);
        break;
      }
      default:
        break;
    }
  }
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (!parts.some((part) => part.text !== undefined && sameJson(part.text, result.structuredContent))) {
      parts.push({ text: json });
      display.push(json);
    }
  }

  const onlyText = parts.every((part) => part.text !== undefined);
  const text = parts
    .map((part) => part.text ?? '')
    .filter(Boolean)
    .join('\n');
  const llmContent = parts.length === 0 ? '(no output)' : onlyText ? text : parts;
  const returnDisplay = display.join('\n') || '(no output)';
  if (result.isError !== true) return { llmContent, returnDisplay };
  const message = `MCP tool "${context.toolName}" on server "${context.serverName}" reported an error: ${text || '(no message)'}`;
  return {
    llmContent: onlyText ? `Error: ${message}` : [{ text: `Error: ${message}` }, ...parts.filter((part) => part.text === undefined)],
    returnDisplay: `Error: ${returnDisplay}`,
    error: { type: ToolErrorType.MCP_TOOL_ERROR, message },
  };
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
}
