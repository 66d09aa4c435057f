import test from 'ava';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';

const good = {
  name: 'echo',
  description: 'Echoes text',
  kind: 'other' as const,
  parameters: z.object({ text: z.string() }),
  execute: ({ text }: { text: string }) => Promise.resolve({ llmContent: text, returnDisplay: text }),
};

test('a definition is frozen with its object parameters made strict', (t) => {
  const tool = defineTool(good);
  t.true(Object.isFrozen(tool));
  t.false(tool.parameters.safeParse({ text: 'a', extra: 1 }).success);
});

const bad: Array<[string, unknown, string | RegExp]> = [
  ['not an object', null, 'defineTool: options must be an object'],
  ['a name that is not a string', { ...good, name: 5 }, 'defineTool: options.name must be a string'],
  ['an empty description', { ...good, description: '' }, 'defineTool(echo): options.description must not be empty'],
  ['an unknown kind', { ...good, kind: 'write' }, /^defineTool\(echo\): options\.kind must be one of read, edit/],
  ['parameters that are not a zod schema', { ...good, parameters: { type: 'object' } }, 'defineTool(echo): options.parameters must be a zod schema'],
  ['no execute', { ...good, execute: undefined }, 'defineTool(echo): options.execute must be a function'],
  ['a misspelt field', { ...good, descibe: () => '' }, 'defineTool(echo): options.descibe is not a known option'],
];

for (const [label, definition, message] of bad) {
  test(`${label} is a TypeError naming the field`, (t) => {
    t.throws(() => defineTool(definition as never), { instanceOf: TypeError, message });
  });
}

test('a name Gemini would reject is invalid_tool_name', (t) => {
  t.throws(() => defineTool({ ...good, name: 'a b' }), { message: /a b/ });
});
