import test from 'ava';
import { JsonEncodeThread } from '../../src/mcp/server/json-encode-thread.js';
import { holdsAtLeastChars, OffThreadSseTransport } from '../../src/mcp/server/off-thread-sse-transport.js';

test('a message is large by the characters of its strings and keys, wherever they sit, or by having too many values to count', (t) => {
  t.false(holdsAtLeastChars({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'x'.repeat(99) }] } }, 200));
  t.true(
    holdsAtLeastChars(
      {
        result: {
          content: [
            { type: 'image', data: 'A'.repeat(150) },
            { type: 'text', text: 'x'.repeat(60) },
          ],
        },
      },
      200,
    ),
  );
  t.true(holdsAtLeastChars({ ['k'.repeat(300)]: 1 }, 200), 'a long key counts');
  t.true(holdsAtLeastChars([[[['y'.repeat(250)]]]], 200), 'nesting does not hide a string');
  t.false(holdsAtLeastChars([1, 2, null, true, { a: 'b' }], 200));
  t.true(
    holdsAtLeastChars(
      Array.from({ length: 20_000 }, () => 0),
      200,
    ),
    'past 10,000 values it counts as large',
  );
});

test("the installed MCP SDK's SSE writer is found and replaced (an SDK that changed it fails here, not silently)", (t) => {
  const transport = new OffThreadSseTransport({ transport: { sessionIdGenerator: undefined }, encodeThread: new JsonEncodeThread() });
  t.true(transport.encodesOffThread);
});
