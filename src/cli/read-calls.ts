import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ToolcellError, ToolErrorType } from '../errors.js';
import type { ToolCallRequest } from '../scheduler/tool-call.js';

/** Input larger than this is refused before parsing. */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

const plainObject = z.record(z.string(), z.unknown());

/** One FunctionCall as `toolcell exec` reads it: `{name, args?, id?}`; `args: null` means none. */
const functionCallSchema = z.object({
  name: z.string().min(1),
  args: plainObject.nullish(),
  id: z.string().optional(),
});

/** An item of the batch: a bare call, or a Gemini part wrapping one. */
const batchItemSchema = z.union([z.object({ functionCall: functionCallSchema }).transform((part) => part.functionCall), functionCallSchema]);

/** The shape `toolcell exec` reads, for documentation and for library users who build batches. */
export type FunctionCallInput = z.input<typeof batchItemSchema>;

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
  if (!Array.isArray(data)) throw invalid(`input must be a JSON array of function calls, not ${describe(data)}`);
  const seen = new Set<string>();
  return data.map((item: unknown, index) => {
    const call = parseItem(item, index);
    const callId = call.id ?? `${call.name}-${index}-${randomBytes(4).toString('hex')}`;
    if (seen.has(callId)) throw invalid(`call ${index} (${call.name}): duplicate id ${JSON.stringify(callId)}`);
    seen.add(callId);
    return { callId, name: call.name, args: call.args ?? {} };
  });
}

function parseItem(item: unknown, index: number): z.output<typeof batchItemSchema> {
  const parsed = batchItemSchema.safeParse(item);
  if (parsed.success) return parsed.data;
  // Name the problem in the call as written: unwrap a Gemini part first, so
  // `{functionCall: {args: 1}}` is reported as a bad "args", not as a bad part.
  const call = isObject(item) && isObject(item['functionCall']) ? item['functionCall'] : item;
  if (!isObject(call)) return fail(`call ${index}: must be an object {name, args?, id?}, not ${describe(call)}`);
  const problem = functionCallSchema.safeParse(call).error?.issues[0];
  const field = String(problem?.path[0] ?? 'name');
  if (field === 'name') return fail(`call ${index}: "name" must be a non-empty string`);
  const where = `call ${index} (${String(call['name'])})`;
  if (field === 'args') return fail(`${where}: "args" must be an object, not ${describe(call['args'])}`);
  return fail(`${where}: "id" must be a string`);
}

function fail(message: string): never {
  throw invalid(message);
}

function invalid(message: string): ToolcellError {
  return new ToolcellError(ToolErrorType.INVALID_INPUT, message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
