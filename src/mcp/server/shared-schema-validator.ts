import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';

/**
 * One JSON-Schema validator for every session's MCP Server. Left to itself,
 * the SDK gives each Server an Ajv instance of its own, and making one
 * (compiling Ajv's meta-schemas) cost 10-80 ms of the main thread per session
 * open, up to 400 ms on a loaded machine: a tenant opening and closing
 * sessions in a loop stalled every other tenant's requests (bench/hosting's
 * session churn among the other attacks). This server needs Ajv only to
 * check elicitation answers, so it is made on the first such use, once.
 */
class SharedSchemaValidator implements jsonSchemaValidator {
  #ajv: AjvJsonSchemaValidator | undefined;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.#ajv ??= new AjvJsonSchemaValidator();
    return this.#ajv.getValidator<T>(schema);
  }
}

/** The process's one validator, handed to every `Server` this project makes. */
export const sharedSchemaValidator: jsonSchemaValidator = new SharedSchemaValidator();
