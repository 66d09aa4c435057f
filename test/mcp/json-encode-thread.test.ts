import test from 'ava';
import { JsonEncodeThread } from '../../src/mcp/server/json-encode-thread.js';

/**
 * The encoding thread gives exactly the bytes the main thread's
 * JSON.stringify and UTF-8 encoding give (what the MCP SDK writes), for
 * every kind of character JSON escapes or encodes in several bytes, and
 * hands back what it cannot encode rather than guessing.
 */
const TRICKY = 'plain "quoted" back\\slash\ttab\u0001\u001f\u007f line\u2028sep\u2029 é 中 😀 \ud800 lone\udfff </script> end\n';

test('the thread encodes as JSON.stringify and UTF-8 do, small and large, keys and values', async (t) => {
  const thread = new JsonEncodeThread();
  t.teardown(() => thread.close());
  const values: unknown[] = [
    { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: TRICKY }] } },
    { [TRICKY]: [1, -0, 1.5e300, null, true, false, '', { nested: { deeper: [TRICKY] } }], skipped: undefined },
    { jsonrpc: '2.0', id: 'x', result: { content: [{ type: 'text', text: TRICKY.repeat(Math.ceil((1024 * 1024) / TRICKY.length)) }] } },
    'just a string',
    [undefined, null],
  ];
  for (const value of values) {
    const bytes = await thread.encode(value);
    t.truthy(bytes);
    t.true(Buffer.from(bytes!).equals(Buffer.from(JSON.stringify(value), 'utf8')), JSON.stringify(value).slice(0, 80));
  }
});

test('a value the thread cannot take gives undefined, and the thread goes on', async (t) => {
  const thread = new JsonEncodeThread();
  t.teardown(() => thread.close());
  t.is(await thread.encode({ call: () => 1 }), undefined);
  t.is(await thread.encode({ big: 10n }), undefined, 'JSON.stringify refuses a BigInt: the caller then meets that refusal itself');
  t.is(Buffer.from((await thread.encode({ ok: 1 }))!).toString(), '{"ok":1}');
});

test('encodes still waiting when the thread is closed give undefined; a closed thread starts again on the next', async (t) => {
  const thread = new JsonEncodeThread();
  t.teardown(() => thread.close());
  const waiting = thread.encode({ text: 'x'.repeat(8 * 1024 * 1024) });
  await thread.close();
  t.is(await waiting, undefined);
  t.is(Buffer.from((await thread.encode([1]))!).toString(), '[1]');
});

test("the thread's CPU time for a message is charged to the caller's budget, which it waits for first", async (t) => {
  const thread = new JsonEncodeThread();
  t.teardown(() => thread.close());
  const charged: number[] = [];
  let open!: () => void;
  const admitted = new Promise<void>((resolve) => (open = resolve));
  const budget = { admit: () => admitted, charge: (cpuMs: number) => void charged.push(cpuMs) };
  let done = false;
  const encoding = thread.encode({ text: 'x'.repeat(4 * 1024 * 1024) }, { budget }).then((bytes) => {
    done = true;
    return bytes;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.false(done, 'encoded before its budget admitted it');
  open();
  t.is((await encoding)?.byteLength, '{"text":""}'.length + 4 * 1024 * 1024);
  t.is(charged.length, 1);
  t.true(charged[0]! > 0);
});
