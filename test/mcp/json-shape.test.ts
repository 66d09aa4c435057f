import test from 'ava';
import { DEFAULT_MAX_BODY_DEPTH, DEFAULT_MAX_BODY_VALUES, jsonShapeProblem } from '../../src/mcp/server/json-shape.js';

const limits = { maxValues: 10, maxDepth: 3 };
const shape = (text: string) => jsonShapeProblem(Buffer.from(text), limits);

test('objects, arrays and the items after each comma count as values; past maxValues the body is refused', (t) => {
  t.is(shape('[1,2,3,4,5,6,7,8,9,10]'), undefined, 'one array and nine commas: 10');
  t.is(shape('[1,2,3,4,5,6,7,8,9,10,11]'), 'values');
  t.is(shape('{"a":{},"b":{},"c":{},"d":{}}'), undefined);
  t.is(shape('[{},{},{},{},{},{}]'), 'values');
});

test('nesting past maxDepth is refused; depth comes back down as objects and arrays close', (t) => {
  t.is(shape('[[[1]]]'), undefined);
  t.is(shape('[[[[1]]]]'), 'depth');
  t.is(shape('{"a":{"b":[1]},"c":{"d":[2]},"e":[[3]]}'), undefined);
});

test('brackets, braces and commas inside strings are text, whatever the escapes around them', (t) => {
  t.is(shape(JSON.stringify({ a: '[[[[[[,,,,,,,,,,,,,{{{{{{' })), undefined);
  t.is(shape(JSON.stringify({ a: 'quote " then [[[[[[[[ and ,,,,,,,,,,,,' })), undefined);
  t.is(shape(JSON.stringify({ a: 'backslash \\', b: '[[[[[[[[,,,,,,,,,,,' })), undefined, 'a string ending in a backslash still ends at its quote');
  t.is(shape(JSON.stringify({ a: '\\\\\\"[[[[[[[[' })), undefined);
  // The same text out of the string counts.
  t.is(shape('{"a":"\\\\"}[[[[[[[['), 'depth', 'an even run of backslashes does not escape the quote');
});

test('text that is not JSON is left to the parser: an unterminated string, stray closers', (t) => {
  t.is(shape('"never ends [[[[[[[['), undefined);
  t.is(shape(']]]]]]'), undefined);
  t.is(shape(''), undefined);
});

test('the defaults take what tool calls send (a long string, a few hundred values) and refuse what only an attacker sends', (t) => {
  const defaults = { maxValues: DEFAULT_MAX_BODY_VALUES, maxDepth: DEFAULT_MAX_BODY_DEPTH };
  const call = (args: unknown) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_file', arguments: args } }));
  t.is(jsonShapeProblem(call({ file_path: 'a.csv', content: 'a,b,[c],{d}\n'.repeat(300_000) }), defaults), undefined);
  t.is(jsonShapeProblem(call({ include: Array.from({ length: 1000 }, (_, i) => `src/${i}/**`) }), defaults), undefined);
  t.is(jsonShapeProblem(call({ junk: Array.from({ length: 1_000_000 }, () => ({})) }), defaults), 'values');
  t.is(jsonShapeProblem(Buffer.from('['.repeat(100_000) + ']'.repeat(100_000)), defaults), 'depth');
});
