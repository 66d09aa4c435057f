import { ToolcellError, ToolErrorType } from '../errors.js';
import type { JsonSchema } from '../tools/tool.js';

/** One tool a discovery command announced, checked. */
export interface DiscoveredDeclaration {
  /** The name the command used; passed back to the call command. */
  name: string;
  description: string;
  /** The parameters as JSON Schema, as the command gave them (Gemini `parameters` or `parametersJsonSchema`). */
  parametersJsonSchema: JsonSchema;
}

/**
 * Parses a discovery command's stdout: a JSON array of FunctionDeclarations,
 * bare or inside `{functionDeclarations: [...]}` (also an array of such
 * objects, as Gemini's `tools` list is written). Throws a ToolcellError
 * `invalid_discovery_output` that says what is wrong and where
 * (`declaration 3 ("foo"): parameters must be an object`).
 */
export function parseFunctionDeclarations(stdout: string): DiscoveredDeclaration[] {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch (error) {
    const head = stdout.trim().slice(0, 80);
    throw invalid(`output is not valid JSON (${(error as Error).message})${head ? `; it starts with ${JSON.stringify(head)}` : '; it is empty'}`);
  }
  const declarations = collectDeclarations(json);
  const seen = new Set<string>();
  return declarations.map((raw, index) => {
    const declaration = checkDeclaration(raw, index);
    if (seen.has(declaration.name)) throw invalid(`declaration ${index} ("${declaration.name}"): the name is declared twice`);
    seen.add(declaration.name);
    return declaration;
  });
}

function collectDeclarations(json: unknown): unknown[] {
  const list = Array.isArray(json) ? json : isObject(json) && Array.isArray(json['functionDeclarations']) ? [json] : undefined;
  if (!list) throw invalid('expected a JSON array of function declarations, or an object with a "functionDeclarations" array');
  const declarations: unknown[] = [];
  for (const item of list) {
    if (isObject(item) && item['name'] === undefined && Array.isArray(item['functionDeclarations'])) {
      declarations.push(...item['functionDeclarations']);
    } else {
      declarations.push(item);
    }
  }
  return declarations;
}

function checkDeclaration(raw: unknown, index: number): DiscoveredDeclaration {
  if (!isObject(raw)) throw invalid(`declaration ${index}: must be an object`);
  const name = raw['name'];
  if (typeof name !== 'string' || name.trim() === '') throw invalid(`declaration ${index}: "name" must be a non-empty string`);
  if (name.length > 256) throw invalid(`declaration ${index}: "name" is longer than 256 characters`);
  const where = `declaration ${index} (${JSON.stringify(name)})`;
  const description = raw['description'] ?? '';
  if (typeof description !== 'string') throw invalid(`${where}: "description" must be a string`);
  const parameters = raw['parametersJsonSchema'] ?? raw['parameters'];
  if (raw['parametersJsonSchema'] !== undefined && raw['parameters'] !== undefined) {
    throw invalid(`${where}: give either "parameters" or "parametersJsonSchema", not both`);
  }
  if (parameters !== undefined && !isObject(parameters)) throw invalid(`${where}: parameters must be a JSON Schema object`);
  const schema = parameters === undefined ? { type: 'object', properties: {} } : toJsonSchema(parameters);
  if (schema['type'] !== undefined && schema['type'] !== 'object') {
    throw invalid(`${where}: parameters must describe an object (type "object"), not ${JSON.stringify(schema['type'])}`);
  }
  return { name, description, parametersJsonSchema: schema };
}

/** Gemini's Schema writes types in capitals (`OBJECT`); JSON Schema in lower case. */
function toJsonSchema(node: Record<string, unknown>, depth = 0): JsonSchema {
  if (depth > 32) return {};
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'type' && typeof value === 'string') out[key] = value.toLowerCase();
    else if (Array.isArray(value)) out[key] = value.map((item) => (isObject(item) ? toJsonSchema(item, depth + 1) : item));
    else if (isObject(value) && key !== 'default' && key !== 'const') out[key] = toJsonSchema(value, depth + 1);
    else out[key] = value;
  }
  return out;
}

function invalid(problem: string): ToolcellError {
  return new ToolcellError(ToolErrorType.INVALID_DISCOVERY_OUTPUT, problem);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
