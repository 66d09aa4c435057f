/**
 * A big image answer costs the server's main thread no pass over its
 * base64. The SDK's Server checks a tools/call result against its schema,
 * whose base64 check runs `atob` over every image: for a tenant's 25 MB
 * answer about half a second in which no other tenant's call moved
 * (bench/hosting, "answers it never reads"). The real read_file, in the real
 * worker pool, answers a real MCP server; the test speaks JSON-RPC to it
 * over the SDK's in-memory transport, so no client-side check runs in this
 * process, and counts the `atob` calls over a long string meanwhile.
 */
import test from 'ava';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createToolServer } from '../../src/mcp/server/create-tool-server.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { useTempWorkspace } from '../helpers/workspace.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

test("a 6 MB image's answer reaches the client whole, and the server runs no atob over it", async (t) => {
  const ws = useTempWorkspace(t);
  const image = Buffer.concat([PNG_SIGNATURE, Buffer.alloc(6 * 1024 * 1024, 7)]);
  ws.write('big.png', image);
  const runtime = await createRuntime({ workspace: ws.root, sandbox: 'none', approvalMode: 'yolo', pool: { threads: 1 } });
  t.teardown(() => runtime.close());
  const server = createToolServer({ registry: runtime.registry, createScheduler: (settings) => runtime.createScheduler(settings) });
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(theirs);
  t.teardown(() => server.close());
  const answers = new Map<string | number, JSONRPCMessage>();
  const waiters = new Map<string | number, () => void>();
  ours.onmessage = (message) => {
    if ('id' in message && message.id !== undefined) {
      answers.set(message.id, message);
      waiters.get(message.id)?.();
    }
  };
  await ours.start();
  const ask = async (id: number, method: string, params: Record<string, unknown>): Promise<JSONRPCMessage> => {
    const answered = new Promise<void>((resolve) => waiters.set(id, resolve));
    await ours.send({ jsonrpc: '2.0', id, method, params });
    await answered;
    return answers.get(id)!;
  };
  await ask(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
  await ours.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

  const realAtob = globalThis.atob;
  let longDecodes = 0;
  globalThis.atob = (data: string) => {
    if (data.length > 1024 * 1024) longDecodes++;
    return realAtob(data);
  };
  let answer: JSONRPCMessage;
  try {
    answer = await ask(2, 'tools/call', { name: 'read_file', arguments: { file_path: 'big.png' } });
  } finally {
    globalThis.atob = realAtob;
  }
  t.is(longDecodes, 0, 'the server decoded the base64 it had just encoded');
  const content = (answer as { result?: { content?: Array<{ type: string; data?: string; mimeType?: string }> } }).result?.content ?? [];
  const shown = content.find((part) => part.type === 'image');
  t.is(shown?.mimeType, 'image/png', JSON.stringify(answer).slice(0, 300));
  t.true(Buffer.from(shown?.data ?? '', 'base64').equals(image), 'the image arrives byte for byte');

  // Requests are still checked: a call without a name is refused, as the SDK's own handler refuses it.
  const bad = await ask(3, 'tools/call', { arguments: {} });
  t.true('error' in bad, JSON.stringify(bad));
});
