import test from 'ava';
import { callResultToToolResult } from '../../src/mcp/call-result.js';

const context = { toolName: 't', serverName: 's' };

test('text blocks join into one string', (t) => {
  const result = callResultToToolResult(
    {
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    },
    context,
  );
  t.deepEqual(result, { llmContent: 'a\nb', returnDisplay: 'a\nb' });
});

test('embedded resources and links are kept', (t) => {
  const result = callResultToToolResult(
    {
      content: [
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inside' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAEC', mimeType: 'application/pdf' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c' },
      ],
    },
    context,
  );
  t.deepEqual(result.llmContent, [{ text: 'inside' }, { inlineData: { mimeType: 'application/pdf', data: 'AAEC' } }, { text: 'Resource link: c (file:///c)' }]);
});

test('structured content without a matching text block is added as JSON', (t) => {
  const result = callResultToToolResult({ content: [{ type: 'text', text: 'done' }], structuredContent: { n: 1 } }, context);
  t.is(result.llmContent, 'done\n{"n":1}');
  const same = callResultToToolResult({ content: [{ type: 'text', text: '{ "n": 1 }' }], structuredContent: { n: 1 } }, context);
  t.is(same.llmContent, '{ "n": 1 }');
});

test('empty content says so', (t) => {
  t.is(callResultToToolResult({ content: [] }, context).llmContent, '(no output)');
});

test('isError keeps media parts after the error text', (t) => {
  const result = callResultToToolResult(
    {
      isError: true,
      content: [
        { type: 'text', text: 'bad' },
        { type: 'image', data: 'AA==', mimeType: 'image/png' },
      ],
    },
    context,
  );
  t.is(result.error?.type, 'mcp_tool_error');
  t.is(result.error?.message, 'MCP tool "t" on server "s" reported an error: bad');
  t.deepEqual(result.llmContent, [
    { text: 'Error: MCP tool "t" on server "s" reported an error: bad' },
    { inlineData: { mimeType: 'image/png', data: 'AA==' } },
  ]);
});
