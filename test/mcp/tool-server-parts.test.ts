import test from 'ava';
import { createToolServer } from '../../src/mcp/server/create-tool-server.js';
import { sharedSchemaValidator } from '../../src/mcp/server/shared-schema-validator.js';
import { toolAnnotations } from '../../src/mcp/server/tool-annotations.js';
import { ToolNameMap } from '../../src/mcp/server/tool-name-map.js';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import type { Tool } from '../../src/tools/tool.js';

test('Gemini names map to MCP names and back; `:` becomes `_`, collisions get a suffix', (t) => {
  const map = new ToolNameMap(['read_file', 'ns:tool', 'ns_tool', 'mcp_fx_echo.v2']);
  t.is(map.toMcp('read_file'), 'read_file');
  t.is(map.toMcp('mcp_fx_echo.v2'), 'mcp_fx_echo.v2');
  t.is(map.toMcp('ns:tool'), 'ns_tool');
  t.is(map.toMcp('ns_tool'), 'ns_tool_2');
  t.is(map.toGemini('ns_tool'), 'ns:tool');
  t.is(map.toGemini('ns_tool_2'), 'ns_tool');
  t.is(map.toGemini('unknown'), undefined);
  t.is(map.toGemini('bad name!'), undefined);
});

test('annotations follow the kind', (t) => {
  const tool = (kind: Tool['kind']) => ({ kind, displayName: `T ${kind}` }) as Tool<unknown>;
  t.deepEqual(toolAnnotations(tool('read')), { title: 'T read', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
  t.like(toolAnnotations(tool('fetch')), { readOnlyHint: true, openWorldHint: true });
  t.like(toolAnnotations(tool('edit')), { readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  t.like(toolAnnotations(tool('delete')), { destructiveHint: true, idempotentHint: true });
  t.like(toolAnnotations(tool('execute')), { readOnlyHint: false, destructiveHint: true, openWorldHint: true });
});

test('every session’s MCP Server shares one JSON-Schema validator, made only when first used', (t) => {
  const registry = new ToolRegistry();
  const make = () =>
    createToolServer({
      registry,
      createScheduler: () => {
        throw new Error('not called: no tool call is made');
      },
    });
  // The SDK keeps it in `_jsonSchemaValidator` and otherwise makes an Ajv instance per Server (10-80 ms
  // of the main thread per session open). Should the SDK rename the field, this fails: check its default again.
  const validators = [make(), make(), make()].map((server) => (server as unknown as { _jsonSchemaValidator: unknown })._jsonSchemaValidator);
  t.true(
    validators.every((validator) => validator === sharedSchemaValidator),
    'one validator for every session',
  );
  const check = sharedSchemaValidator.getValidator<{ a: number }>({ type: 'object', properties: { a: { type: 'number' } }, required: ['a'] });
  t.true(check({ a: 1 }).valid);
  t.false(check({ a: 'x' }).valid, 'and it validates once made');
});
