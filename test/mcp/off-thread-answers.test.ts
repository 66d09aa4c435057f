/**
 * A large answer is encoded as JSON off the server's event loop. The MCP
 * SDK's SSE writer stringified and UTF-8-encoded every answer on the main
 * thread: for a tenant's 25 MB image 0.3-0.8 s on a busy host, in which no
 * other tenant's call moved (bench/hosting, "answers it never reads"). Real
 * HTTP, the real read_file in the real worker pool, the SDK's own client;
 * the test counts the main thread's JSON.stringify and TextEncoder work on
 * long values meanwhile, and checks every answer arrives whole.
 */
import test, { type ExecutionContext } from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serveHttp } from '../../src/mcp/server/serve-http.js';
import { createSessionFactory } from '../../src/runtime/mcp-session-factory.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { useTempWorkspace } from '../helpers/workspace.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const LONG = 1024 * 1024;

/** Counts the main thread's JSON.stringify results and TextEncoder inputs of at least LONG characters while `run` runs. */
async function countLongEncodings<T>(run: () => Promise<T>): Promise<{ value: T; stringified: number; encoded: number }> {
  const realStringify = JSON.stringify;
  const realEncode = TextEncoder.prototype.encode;
  let stringified = 0;
  let encoded = 0;
  JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
    const text = realStringify(...args);
    if (typeof text === 'string' && text.length >= LONG) stringified++;
    return text;
  }) as typeof JSON.stringify;
  TextEncoder.prototype.encode = function (this: InstanceType<typeof TextEncoder>, input?: string) {
    if (input !== undefined && input.length >= LONG) encoded++;
    return realEncode.call(this, input);
  };
  try {
    return { value: await run(), stringified, encoded };
  } finally {
    JSON.stringify = realStringify;
    TextEncoder.prototype.encode = realEncode;
  }
}

async function start(t: ExecutionContext) {
  const ws = useTempWorkspace(t);
  const runtime = await createRuntime({ workspace: ws.root, sandbox: 'none', approvalMode: 'yolo', pool: { threads: 2 } });
  t.teardown(() => runtime.close());
  const server = await serveHttp({
    port: 0,
    createScheduler: (settings) => runtime.createScheduler(settings),
    createSession: createSessionFactory({ baseRegistry: runtime.registry }),
  });
  t.teardown(() => server.close());
  const client = new Client({ name: 'off-thread-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  t.teardown(() => client.close());
  return { ws, client };
}

type Content = Array<{ type: string; text?: string; data?: string; mimeType?: string }>;

test("a 6 MB image's answer reaches the client whole, and the event loop neither stringifies nor encodes it", async (t) => {
  const { ws, client } = await start(t);
  const image = Buffer.concat([PNG_SIGNATURE, Buffer.alloc(6 * 1024 * 1024, 7)]);
  ws.write('big.png', image);
  const { value: answer, stringified, encoded } = await countLongEncodings(() => client.callTool({ name: 'read_file', arguments: { file_path: 'big.png' } }));
  const shown = (answer.content as Content).find((part) => part.type === 'image');
  t.is(shown?.mimeType, 'image/png');
  t.true(Buffer.from(shown?.data ?? '', 'base64').equals(image), 'the image arrives byte for byte');
  t.is(stringified, 0, 'the main thread stringified the answer');
  t.is(encoded, 0, 'the main thread encoded the answer');
});

test('several large and small answers at once over one session each arrive whole', async (t) => {
  const { ws, client } = await start(t);
  // Different bytes in each, so that an answer given to the wrong call shows.
  const images = [1, 2, 3].map((n) => Buffer.concat([PNG_SIGNATURE, Buffer.alloc(n * 400 * 1024, n)]));
  images.forEach((image, n) => ws.write(`big-${n}.png`, image));
  ws.write('small.txt', 'small\n');
  const read = (file: string) => client.callTool({ name: 'read_file', arguments: { file_path: file } });
  const {
    value: answers,
    stringified,
    encoded,
  } = await countLongEncodings(() => Promise.all([read('big-0.png'), read('small.txt'), read('big-1.png'), read('small.txt'), read('big-2.png')]));
  const parts = answers.map((answer) => answer.content as Content);
  for (const [index, n] of [
    [0, 0],
    [2, 1],
    [4, 2],
  ] as const)
    t.true(Buffer.from(parts[index]?.find((part) => part.type === 'image')?.data ?? '', 'base64').equals(images[n]!), `big-${n}.png arrives whole`);
  for (const index of [1, 3]) t.regex(parts[index]?.map((part) => part.text ?? '').join('') ?? '', /small/);
  t.is(stringified, 0);
  t.is(encoded, 0);
});
