import { z } from 'zod';
import type { JsonSchema, ValidationResult } from './tool.js';

/**
 * The JSON Schema Gemini receives as `parametersJsonSchema`. `io: 'input'`
 * keeps defaulted fields optional, which is what the model may omit.
 */
export function zodToParametersJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  delete json['$schema'];
  return json;
}

/**
 * Checks a model's raw arguments: a JSON object (or nothing, read as `{}`)
 * that satisfies the zod schema, with a one-line, model-readable message.
 */
export function validateWithZod<T>(schema: z.ZodType<T>, raw: unknown): ValidationResult<T> {
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) {
    return { ok: false, error: 'params must be a JSON object' };
  }
  const result = schema.safeParse(raw ?? {});
  if (result.success) return { ok: true, params: result.data };
  return { ok: false, error: formatZodError(result.error) };
}

function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const where = issue.path.length > 0 ? `params/${issue.path.join('/')}` : 'params';
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}
