import test from 'ava';
import { parseFunctionDeclarations } from '../../src/discovery/function-declarations.js';
import { isToolcellError } from '../../src/errors.js';

function problem(t: { throws: (fn: () => unknown) => unknown }, stdout: string): string {
  const error = t.throws(() => parseFunctionDeclarations(stdout)) as Error;
  if (!isToolcellError(error) || error.code !== 'invalid_discovery_output') throw new Error(`unexpected ${String(error)}`);
  return error.message;
}

test('a bare array of declarations', (t) => {
  const out = parseFunctionDeclarations(
    JSON.stringify([{ name: 'greet', description: 'Says hi', parameters: { type: 'OBJECT', properties: { who: { type: 'STRING' } } } }]),
  );
  t.deepEqual(out, [{ name: 'greet', description: 'Says hi', parametersJsonSchema: { type: 'object', properties: { who: { type: 'string' } } } }]);
});

test('declarations inside functionDeclarations, alone or in a tools list', (t) => {
  const one = { name: 'a', parametersJsonSchema: { type: 'object', properties: {} } };
  t.is(parseFunctionDeclarations(JSON.stringify({ functionDeclarations: [one] }))[0]?.name, 'a');
  const list = parseFunctionDeclarations(JSON.stringify([{ functionDeclarations: [one] }, { functionDeclarations: [{ name: 'b' }] }]));
  t.deepEqual(
    list.map((d) => d.name),
    ['a', 'b'],
  );
  t.deepEqual(list[1]?.parametersJsonSchema, { type: 'object', properties: {} });
});

test('bad JSON names the problem and the start of the output', (t) => {
  t.regex(problem(t, 'Loading tools...\n[]'), /not valid JSON.*starts with "Loading tools/);
  t.regex(problem(t, ''), /not valid JSON.*it is empty/);
});

test('a wrong shape is explained', (t) => {
  t.regex(problem(t, '{"tools": []}'), /expected a JSON array/);
  t.regex(problem(t, '[42]'), /declaration 0: must be an object/);
  t.regex(problem(t, '[{"description": "x"}]'), /declaration 0: "name" must be a non-empty string/);
  t.regex(problem(t, '[{"name": "a"}, {"name": "b", "description": 3}]'), /declaration 1 \("b"\): "description" must be a string/);
  t.regex(problem(t, '[{"name": "a", "parameters": {"type": "string"}}]'), /parameters must describe an object/);
  t.regex(problem(t, '[{"name": "a", "parameters": []}]'), /parameters must be a JSON Schema object/);
  t.regex(problem(t, '[{"name": "a"}, {"name": "a"}]'), /"a"\): the name is declared twice/);
});
