import { z } from 'zod';

/**
 * A reader of Gemini CLI's `--output-format stream-json`, written from the
 * event types Gemini CLI declares (packages/core/src/output/types.ts:
 * JsonStreamEventType and the *Event interfaces) and nothing of toolcell's.
 * Like a TypeScript consumer of those types, it requires each declared field
 * with its declared type and lets extra fields pass; a line whose `type` is
 * not one of Gemini CLI's is set aside as `unknown` (a consumer's `default:`
 * branch), so a test can tell a renamed event from a documented addition.
 */

const base = { timestamp: z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'an ISO timestamp') };

const modelStats = z.object({
  total_tokens: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  cached: z.number(),
  input: z.number(),
});

const streamStats = modelStats.extend({
  duration_ms: z.number(),
  tool_calls: z.number(),
  models: z.record(z.string(), modelStats),
});

const errorInfo = z.object({ type: z.string(), message: z.string() });

export const geminiStreamEvent = z.discriminatedUnion('type', [
  z.object({ ...base, type: z.literal('init'), session_id: z.string(), model: z.string() }),
  z.object({ ...base, type: z.literal('message'), role: z.enum(['user', 'assistant']), content: z.string(), delta: z.boolean().optional() }),
  z.object({ ...base, type: z.literal('tool_use'), tool_name: z.string(), tool_id: z.string(), parameters: z.record(z.string(), z.unknown()) }),
  z.object({
    ...base,
    type: z.literal('tool_result'),
    tool_id: z.string(),
    status: z.enum(['success', 'error']),
    output: z.string().optional(),
    error: errorInfo.optional(),
  }),
  z.object({ ...base, type: z.literal('error'), severity: z.enum(['warning', 'error']), message: z.string() }),
  z.object({ ...base, type: z.literal('result'), status: z.enum(['success', 'error']), error: errorInfo.optional(), stats: streamStats.optional() }),
]);

export type GeminiStreamEvent = z.infer<typeof geminiStreamEvent>;

const GEMINI_EVENT_TYPES = new Set(['init', 'message', 'tool_use', 'tool_result', 'error', 'result']);

export interface ParsedStream {
  /** Lines of Gemini CLI's event types, validated, in order. */
  events: GeminiStreamEvent[];
  /** Lines of other types, in order, unvalidated. */
  unknown: Array<{ type: unknown; [field: string]: unknown }>;
}

/** Parses stream-json text; throws naming the line that is not JSON or breaks Gemini CLI's declared shape. */
export function parseGeminiStream(stdout: string): ParsedStream {
  const parsed: ParsedStream = { events: [], unknown: [] };
  const lines = stdout.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, index) => {
    let value: { type?: unknown };
    try {
      value = JSON.parse(line) as { type?: unknown };
    } catch {
      throw new Error(`line ${index + 1} is not JSON: ${line}`);
    }
    if (typeof value.type !== 'string' || !GEMINI_EVENT_TYPES.has(value.type)) {
      parsed.unknown.push(value as ParsedStream['unknown'][number]);
      return;
    }
    const result = geminiStreamEvent.safeParse(value);
    if (!result.success) throw new Error(`line ${index + 1} is not a Gemini CLI ${value.type} event: ${z.prettifyError(result.error)}\n${line}`);
    parsed.events.push(result.data);
  });
  return parsed;
}
