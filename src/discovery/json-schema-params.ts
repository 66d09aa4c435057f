import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { JsonSchema, ValidationResult } from '../tools/tool.js';

// ajv-formats is CommonJS: its default export arrives as the module object under ESM typings.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;

/**
 * One Ajv for every outside schema, set as the MCP SDK sets its own, so a
 * tool validates here as its server would: `strict: false` (servers use
 * keywords Ajv does not know), formats checked, the schema itself not
 * checked against its meta-schema, and every error reported.
 */
const ajv = addFormats(new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true }));

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
    const compiled = ajv.compile(copy);
    validate = (input) => (compiled(input) ? { valid: true } : { valid: false, errorMessage: ajv.errorsText(compiled.errors) });
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
