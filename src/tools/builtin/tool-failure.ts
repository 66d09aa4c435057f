import type { ToolErrorType } from '../../errors.js';
import { classifyFsFailure } from '../../fs/fs-failure.js';
import { toolErrorResult } from '../results.js';
import type { ToolResult } from '../tool.js';

/**
 * The ToolResult for anything a file tool's work threw: ToolcellErrors and
 * errno codes keep their meaning, everything else becomes `fallback`.
 * Built-in tools report failures this way and never throw.
 */
export function failureResult(error: unknown, fallback: ToolErrorType): ToolResult {
  const { type, message } = classifyFsFailure(error, fallback);
  return toolErrorResult(type, message);
}
