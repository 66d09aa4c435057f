import test from 'ava';
import { GEMINI_FUNCTION_NAME, MCP_TOOL_NAME, toGeminiFunctionName, toMcpToolName } from '../../src/tools/names.js';

test('any string maps to a valid Gemini name', (t) => {
  for (const raw of ['mcp_server_tool', '9lives', 'a b/c', 'ü-nicode', 'x'.repeat(200), '', '-dash']) {
    t.regex(toGeminiFunctionName(raw), GEMINI_FUNCTION_NAME, raw);
  }
  t.is(toGeminiFunctionName('read_file'), 'read_file');
});

test('long names keep their head and tail', (t) => {
  const name = toGeminiFunctionName(`mcp_${'server'.repeat(10)}_the_actual_tool_name`);
  t.is(name.length, 64);
  t.true(name.endsWith('the_actual_tool_name'));
});

test('Gemini names map to valid MCP names', (t) => {
  t.regex(toMcpToolName('ns:tool.name'), MCP_TOOL_NAME);
  t.is(toMcpToolName('read_file'), 'read_file');
});
