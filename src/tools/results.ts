import type { ErrorCode } from '../errors.js';
import type { ToolResult } from './tool.js';

/** A failed ToolResult: the model and the user both see `message`. */
export function toolErrorResult(type: ErrorCode, message: string): ToolResult {
  return { llmContent: `Error: ${message}`, returnDisplay: `Error: ${message}`, error: { type, message } };
}
