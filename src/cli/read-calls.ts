import { randomBytes } from 'node:crypto';
import { ToolcellError, ToolErrorType } from '../errors.js';
import type { ToolCallRequest } from '../scheduler/tool-call.js';

/** Input larger than this is refused before parsing. */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * Parses a batch of FunctionCalls: a JSON array whose items are
 * `{name, args?, id?}` or Gemini parts `{functionCall: {name, args?, id?}}`.
 * Throws `invalid_input` naming the first problem. Unknown tool names are not
 * an input error: they become `tool_not_registered` responses.
 */
export function parseFunctionCalls(text: string): ToolCallRequest[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, `malformed JSON input: ${(error as Error).message}`);
  }
  if (!Array.isArray(data)) throw new ToolcellError(ToolErrorType.INVALID_INPUT, `input must be a JSON array of function calls, not ${describe(data)}`);
  const seen = new Set<string>();
  return data.map((item, index) => {
    const call = isObject(item) && isObject(item['functionCall']) ? item['functionCall'] : item;
    if (!isObject(call)) throw new ToolcellError(ToolErrorType.INVALID_INPUT, `call ${index}: must be an object {name, args?, id?}, not ${describe(call)}`);
    const { name, args, id } = call;
    if (typeof name !== 'string' || name.length === 0) throw new ToolcellError(ToolErrorType.INVALID_INPUT, `call ${index}: "name" must be a non-empty string`);
    if (args !== undefined && args !== null && !isObject(args))
      throw new ToolcellError(ToolErrorType.INVALID_INPUT, `call ${index} (${name}): "args" must be an object, not ${describe(args)}`);
    if (id !== undefined && typeof id !== 'string') throw new ToolcellError(ToolErrorType.INVALID_INPUT, `call ${index} (${name}): "id" must be a string`);
    const callId = id ?? `${name}-${index}-${randomBytes(4).toString('hex')}`;
    if (seen.has(callId)) throw new ToolcellError(ToolErrorType.INVALID_INPUT, `call ${index} (${name}): duplicate id ${JSON.stringify(callId)}`);
    seen.add(callId);
    return { callId, name, args: (args as Record<string, unknown> | undefined) ?? {} };
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
