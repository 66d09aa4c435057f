import test from 'ava';
import { z } from 'zod';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createLocalTool } from '../../src/tools/defined-tool.js';

const workspace = { roots: ['/tmp'], stateDir: '/tmp/.toolcell' };
const make = (name: string) =>
  createLocalTool(
    defineTool({
      name,
      description: `${name} tool`,
      kind: 'read',
      parameters: z.object({ n: z.number().default(1) }),
      execute: async () => ({ llmContent: '', returnDisplay: '' }),
    }),
    { workspace },
  );

test('lists tools sorted by name and gives their FunctionDeclarations', (t) => {
  const registry = new ToolRegistry();
  registry.register(make('zeta'));
  registry.register(make('alpha'));
  t.deepEqual(
    registry.list().map((tool) => tool.name),
    ['alpha', 'zeta'],
  );
  const [decl] = registry.functionDeclarations();
  t.is(decl?.name, 'alpha');
  t.is((decl?.parametersJsonSchema as { type: string }).type, 'object');
  // Defaulted fields stay optional for the model.
  t.deepEqual((decl?.parametersJsonSchema as { required?: string[] }).required ?? [], []);
});

test('registering a name twice warns and replaces', (t) => {
  const warnings: string[] = [];
  const registry = new ToolRegistry({ onWarning: (m) => warnings.push(m) });
  registry.register(make('dup'));
  const second = make('dup');
  registry.register(second);
  t.is(registry.get('dup'), second);
  t.deepEqual(warnings, ['Tool "dup" is already registered. Overwriting.']);
});

test("Gemini's name rules are enforced at definition and registration", (t) => {
  t.throws(() => make('9starts-with-digit'), { message: /not a valid Gemini function name/ });
  t.throws(() => make('has space'), { message: /not a valid Gemini function name/ });
  t.throws(() => make('x'.repeat(65)), { message: /not a valid Gemini function name/ });
  t.notThrows(() => make('ok.name:with-dashes_1'));
  const registry = new ToolRegistry();
  const bad = { ...make('fine'), name: 'bad name' };
  t.throws(() => registry.register(bad as never), { message: /not a valid Gemini function name/ });
});

test('unregisterWhere removes matching tools', (t) => {
  const registry = new ToolRegistry();
  registry.register(make('a1'));
  registry.register(make('a2'));
  registry.register(make('b1'));
  t.is(
    registry.unregisterWhere((tool) => tool.name.startsWith('a')),
    2,
  );
  t.deepEqual(
    registry.list().map((tool) => tool.name),
    ['b1'],
  );
});
