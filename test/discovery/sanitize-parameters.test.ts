import test from 'ava';
import { sanitizeParameters } from '../../src/discovery/sanitize-parameters.js';

test('$schema, examples, vendor keys and unsupported combinators are removed', (t) => {
  const input = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    'x-internal': true,
    not: { required: ['b'] },
    if: { properties: { a: { const: 'x' } } },
    properties: { a: { type: 'string', examples: ['hi'], $comment: 'c' } },
  };
  t.deepEqual(sanitizeParameters(input), { type: 'object', properties: { a: { type: 'string' } } });
});

test('the input is not modified', (t) => {
  const input = { type: 'object', properties: { a: { anyOf: [{ type: 'string' }], default: 'x' } } };
  const copy = structuredClone(input);
  sanitizeParameters(input);
  t.deepEqual(input, copy);
});

test('default is dropped beside anyOf (Gemini CLI’s rule), oneOf is read as anyOf', (t) => {
  const out = sanitizeParameters({
    type: 'object',
    properties: {
      a: { anyOf: [{ type: 'string' }, { type: 'number' }], default: 'x' },
      b: { oneOf: [{ type: 'string' }], default: 'y' },
      c: { type: 'string', default: 'z' },
    },
  });
  t.deepEqual(out['properties'], {
    a: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    b: { anyOf: [{ type: 'string' }] },
    c: { type: 'string', default: 'z' },
  });
});

test('string formats other than enum and date-time are removed (Gemini CLI’s rule)', (t) => {
  const out = sanitizeParameters({
    type: 'object',
    properties: {
      a: { type: 'string', format: 'uri' },
      b: { type: 'string', format: 'date-time' },
      c: { type: 'integer', format: 'int64' },
      d: { type: 'number', format: 'weird' },
    },
  });
  t.deepEqual(out['properties'], {
    a: { type: 'string' },
    b: { type: 'string', format: 'date-time' },
    c: { type: 'integer', format: 'int64' },
    d: { type: 'number' },
  });
});

test('enums: strings make a string type, numbers stay numeric, anything else is dropped', (t) => {
  const out = sanitizeParameters({
    type: 'object',
    properties: { s: { enum: ['a', 'b'] }, n: { type: 'integer', enum: [1, 2] }, mixed: { enum: [true, 'x', null], description: 'd' }, k: { const: 'only' } },
  });
  t.deepEqual(out['properties'], {
    s: { enum: ['a', 'b'], type: 'string' },
    n: { type: 'integer', enum: [1, 2] },
    mixed: { description: 'd' },
    k: { enum: ['only'], type: 'string' },
  });
});

test('type lists become nullable or anyOf; Gemini upper-case types are lowered', (t) => {
  const out = sanitizeParameters({
    type: 'OBJECT',
    properties: { a: { type: ['string', 'null'] }, b: { type: ['string', 'integer'] }, c: { type: 'STRING' }, d: { type: 'bogus' } },
  });
  t.deepEqual(out, {
    type: 'object',
    properties: { a: { type: 'string', nullable: true }, b: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, c: { type: 'string' }, d: {} },
  });
});

test('every required name is shown to the model: one without a declared property is declared as any value; no duplicates', (t) => {
  t.deepEqual(sanitizeParameters({ type: 'object', properties: { a: {} }, required: ['a', 'ghost', 'a'] }), {
    type: 'object',
    properties: { a: {}, ghost: {} },
    required: ['a', 'ghost'],
  });
  t.deepEqual(sanitizeParameters({ type: 'object', properties: { a: {} }, required: [] }), { type: 'object', properties: { a: {} } });
});

test('allOf members add their properties and required names to the parent (the parent wins on a clash)', (t) => {
  const out = sanitizeParameters({
    type: 'object',
    properties: { a: { type: 'string' } },
    required: ['a'],
    allOf: [{ properties: { a: { type: 'number' }, b: { type: 'integer', examples: [1] } }, required: ['b'] }, { required: ['c'] }, 'junk'],
  });
  t.deepEqual(out, {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'integer' }, c: {} },
    required: ['a', 'b', 'c'],
  });
});

test('nested items, additionalProperties and $defs are cleaned too', (t) => {
  const out = sanitizeParameters({
    type: 'object',
    properties: {
      list: {
        type: 'array',
        items: { type: 'object', properties: { u: { type: 'string', format: 'email' } }, additionalProperties: { type: 'string', format: 'uuid' } },
      },
      ref: { $ref: '#/$defs/x' },
    },
    $defs: { x: { type: 'string', format: 'hostname', examples: [] } },
  });
  t.deepEqual(out, {
    type: 'object',
    properties: {
      list: { type: 'array', items: { type: 'object', properties: { u: { type: 'string' } }, additionalProperties: { type: 'string' } } },
      ref: { $ref: '#/$defs/x' },
    },
    $defs: { x: { type: 'string' } },
  });
});

test('the top level is always an object schema', (t) => {
  t.deepEqual(sanitizeParameters(undefined), { type: 'object', properties: {} });
  t.deepEqual(sanitizeParameters({ type: 'string' }), { type: 'object', properties: {} });
  t.deepEqual(sanitizeParameters({ properties: { a: { type: 'string' } } }), { type: 'object', properties: { a: { type: 'string' } } });
  t.deepEqual(sanitizeParameters([1, 2]), { type: 'object', properties: {} });
});

test('absurdly deep schemas are cut off instead of blowing the stack', (t) => {
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 10_000; i++) deep = { type: 'object', properties: { x: deep } };
  const out = sanitizeParameters(deep);
  t.is(out['type'], 'object');
});

test('draft-07 definitions become $defs and their refs follow', (t) => {
  const out = sanitizeParameters({
    type: 'object',
    properties: { a: { $ref: '#/definitions/thing' }, b: { $ref: '#/properties/a' } },
    definitions: { thing: { type: 'string', format: 'uri' } },
  });
  t.deepEqual(out, {
    type: 'object',
    properties: { a: { $ref: '#/$defs/thing' }, b: { $ref: '#/properties/a' } },
    $defs: { thing: { type: 'string' } },
  });
});
