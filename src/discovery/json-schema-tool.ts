import { BaseTool, type ToolFields } from '../tools/base-tool.js';
import type { JsonSchema, ValidationResult } from '../tools/tool.js';
import { createParamsValidator } from './json-schema-params.js';
import { sanitizeParameters } from './sanitize-parameters.js';

/**
 * A tool whose parameters come as JSON Schema from outside (a discovery
 * command, an MCP server): the model sees a copy cleaned to what Gemini
 * accepts, while arguments are checked against the original schema, as the
 * tool's owner will check them.
 */
export abstract class JsonSchemaTool extends BaseTool<Record<string, unknown>> {
  readonly #validate: (raw: unknown) => ValidationResult<Record<string, unknown>>;

  constructor(fields: Omit<ToolFields<Record<string, unknown>>, 'parametersJsonSchema'> & { inputSchema: unknown }) {
    const { inputSchema, ...rest } = fields;
    super({ ...rest, parametersJsonSchema: sanitizeParameters(inputSchema) });
    this.#validate = createParamsValidator(inputSchema as JsonSchema);
  }

  validateParams(raw: unknown): ValidationResult<Record<string, unknown>> {
    return this.#validate(raw);
  }
}
