import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import type { JsonSchema, ValidationResult } from '../tools/tool.js';

const validatorProvider = new AjvJsonSchemaValidator();

/** Keywords that make Ajv look up another meta-schema; the rest of the schema still validates without them. */
const META_KEYWORDS = ['$schema', '$id'];

/**
 * A params check for tools whose parameters come as JSON Schema from outside
 * (discovery commands, MCP servers): arguments must be a JSON object and,
 * when the schema compiles, satisfy it. A schema Ajv cannot compile only
 * gets the object check: the server validates again anyway, and a tool must
 * not become uncallable because of an exotic keyword.
 */
export function createParamsValidator(schema: JsonSchema): (raw: unknown) => ValidationResult<Record<string, unknown>> {
  let validate: ((input: unknown) => { valid: boolean; errorMessage?: string | undefined }) | undefined;
  try {
    const copy: Record<string, unknown> = { ...schema };
    for (const keyword of META_KEYWORDS) delete copy[keyword];
    validate = validatorProvider.getValidator(copy as JsonSchemaType);
  } catch {
    validate = undefined;
  }
  return (raw) => {
    const params = raw ?? {};
    if (typeof params !== 'object' || params === null || Array.isArray(params)) {
      return { ok: false, error: 'params must be a JSON object' };
    }
    if (validate) {
      const result = validate(params);
      if (!result.valid) {
        // Ajv calls the value `data`; the model knows it as the params (the same words as zod-checked tools use).
        const message = (result.errorMessage ?? 'params do not match the tool schema').replace(/(^|, )data(?=[/ ]|$)/g, '$1params');
        return { ok: false, error: message };
      }
    }
    return { ok: true, params: params as Record<string, unknown> };
  };
}
