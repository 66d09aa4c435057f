import type { JsonSchema } from '../tools/tool.js';

/**
 * Keywords Gemini's `parametersJsonSchema` understands. Everything else
 * (`$schema`, `examples`, `allOf`, `if`/`then`, vendor `x-*` keys, …) is
 * dropped: Gemini rejects a declaration with keywords it does not know.
 */
const KEPT_KEYWORDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'default',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'additionalProperties',
  'propertyOrdering',
  'anyOf',
  '$ref',
  '$defs',
  '$id',
  '$anchor',
]);

const STRING_FORMATS = new Set(['enum', 'date-time']);
const NUMBER_FORMATS = new Set(['int32', 'int64', 'float', 'double']);
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
/** Deeper schemas are cut off (replaced by `{}`): no input may blow the stack. */
const MAX_DEPTH = 32;

/**
 * Turns a tool's JSON Schema (from an MCP server or a discovery command) into
 * one Gemini accepts, following Gemini CLI's `sanitizeParameters`:
 * no `default` beside `anyOf`; `format` only where Gemini knows it; plus
 * unknown keywords removed, `oneOf` read as `anyOf`, `definitions` as
 * `$defs`, `const` as a one-value
 * `enum`, `["T","null"]` types as `nullable`, the `properties` and
 * `required` of `allOf` members merged into their parent, a required name
 * without a declared property declared as taking any value, and the top level
 * always an object.
 *
 * The cleaned schema only describes the call to the model; arguments are
 * still validated against the original schema, so every field that schema
 * requires is shown as required here too. That is also why an `enum` of
 * numbers stays numeric (Gemini CLI's "enum only on STRING" would make every
 * call fail the server's own validation): an enum of other values is dropped.
 * The input is not modified.
 */
export function sanitizeParameters(schema: unknown): JsonSchema {
  const cleaned = sanitizeNode(schema, 0);
  if (cleaned['type'] === undefined && isPlainObject(cleaned['properties'])) cleaned['type'] = 'object';
  if (cleaned['type'] !== 'object') return { type: 'object', properties: {} };
  if (typeof cleaned['properties'] !== 'object') cleaned['properties'] = {};
  return cleaned;
}

function sanitizeNode(node: unknown, depth: number): JsonSchema {
  if (typeof node !== 'object' || node === null || Array.isArray(node) || depth > MAX_DEPTH) return {};
  const source = node as Record<string, unknown>;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'oneOf' && source['anyOf'] === undefined) copyKeyword(out, 'anyOf', value, depth);
    // Draft-07 `definitions` (zod-to-json-schema's output) become `$defs`, and their refs follow.
    else if (key === 'definitions' && source['$defs'] === undefined) copyKeyword(out, '$defs', value, depth);
    else if (key === '$ref' && typeof value === 'string') out[key] = value.replace(/^#\/definitions\//, '#/$defs/');
    else if (key === 'const' && source['enum'] === undefined) copyKeyword(out, 'enum', [value], depth);
    else if (KEPT_KEYWORDS.has(key)) copyKeyword(out, key, value, depth);
  }
  if (Array.isArray(source['allOf'])) mergeAllOf(out, source['allOf'], depth);
  normaliseType(out);
  if (out['anyOf'] !== undefined) delete out['default'];
  normaliseEnum(out);
  normaliseFormat(out);
  normaliseRequired(out);
  return out;
}

function copyKeyword(out: JsonSchema, key: string, value: unknown, depth: number): void {
  switch (key) {
    case 'properties':
    case '$defs': {
      if (!isPlainObject(value)) return;
      const map: Record<string, JsonSchema> = {};
      for (const [name, child] of Object.entries(value)) map[name] = sanitizeNode(child === true ? {} : child, depth + 1);
      out[key] = map;
      return;
    }
    case 'items':
      if (isPlainObject(value)) out[key] = sanitizeNode(value, depth + 1);
      return;
    case 'prefixItems':
    case 'anyOf':
      if (Array.isArray(value) && value.length > 0) out[key] = value.map((child) => sanitizeNode(child, depth + 1));
      return;
    case 'additionalProperties':
      if (typeof value === 'boolean') out[key] = value;
      else if (isPlainObject(value)) out[key] = sanitizeNode(value, depth + 1);
      return;
    case 'required':
    case 'propertyOrdering':
      if (Array.isArray(value)) out[key] = value.filter((item): item is string => typeof item === 'string');
      return;
    case 'enum':
      if (Array.isArray(value)) out[key] = [...value];
      return;
    case 'type':
      if (typeof value === 'string' || Array.isArray(value)) out[key] = Array.isArray(value) ? [...value] : value;
      return;
    default:
      // Scalars only (description, minimum, pattern, default, …): no nested schema hides here.
      if (value === null || typeof value !== 'object' || key === 'default') out[key] = value;
  }
}

/** Gemini Schema spellings (`OBJECT`) become JSON Schema's; `["string","null"]` becomes `nullable`. */
function normaliseType(out: JsonSchema): void {
  const type = out['type'];
  if (typeof type === 'string') {
    const lower = type.toLowerCase();
    if (JSON_TYPES.has(lower)) out['type'] = lower;
    else delete out['type'];
    return;
  }
  if (!Array.isArray(type)) return;
  const types = type
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.toLowerCase())
    .filter((item) => JSON_TYPES.has(item));
  const nonNull = types.filter((item) => item !== 'null');
  delete out['type'];
  if (nonNull.length === 1) out['type'] = nonNull[0];
  else if (nonNull.length > 1 && out['anyOf'] === undefined) out['anyOf'] = nonNull.map((item) => ({ type: item }));
  if (types.includes('null') && nonNull.length > 0) out['nullable'] = true;
}

function normaliseEnum(out: JsonSchema): void {
  const values = out['enum'];
  if (values === undefined) return;
  if (!Array.isArray(values) || values.length === 0) {
    delete out['enum'];
  } else if (values.every((value) => typeof value === 'string')) {
    out['type'] = 'string';
  } else if (values.every((value) => typeof value === 'number')) {
    if (out['type'] !== 'integer') out['type'] = 'number';
  } else {
    delete out['enum'];
  }
}

function normaliseFormat(out: JsonSchema): void {
  const format = out['format'];
  if (format === undefined) return;
  const type = out['type'];
  const known = type === 'string' ? STRING_FORMATS : type === 'number' || type === 'integer' ? NUMBER_FORMATS : undefined;
  if (typeof format !== 'string' || !known?.has(format)) delete out['format'];
}

/**
 * `allOf: [{properties, required}, …]` is how generators often add fields;
 * Gemini does not take `allOf`, so the members' properties (the parent's win)
 * and required names are folded into the parent. Other keywords of the
 * members are dropped like any unknown keyword.
 */
function mergeAllOf(out: JsonSchema, members: unknown[], depth: number): void {
  for (const member of members) {
    if (!isPlainObject(member)) continue;
    const cleaned = sanitizeNode(member, depth + 1);
    if (isPlainObject(cleaned['properties'])) {
      const properties = isPlainObject(out['properties']) ? out['properties'] : {};
      out['properties'] = { ...cleaned['properties'], ...properties };
    }
    if (Array.isArray(member['required'])) {
      out['required'] = [...(Array.isArray(out['required']) ? out['required'] : []), ...member['required']];
    }
  }
}

function normaliseRequired(out: JsonSchema): void {
  const required = out['required'];
  if (!Array.isArray(required)) return;
  const names = [...new Set(required.filter((name): name is string => typeof name === 'string'))];
  if (names.length === 0) {
    delete out['required'];
    return;
  }
  // A required name the schema does not describe is still required when the
  // call is validated: declare it (any value) so the model sees it.
  const properties = isPlainObject(out['properties']) ? out['properties'] : {};
  for (const name of names) if (!Object.hasOwn(properties, name)) properties[name] = {};
  out['properties'] = properties;
  out['required'] = names;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
