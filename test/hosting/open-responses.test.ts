/**
 * A tenant whose client does not read its answers: the server held each
 * answer it could not hand to the kernel in memory, and its socket, for as
 * long as the client kept the connection (16 unread answers to `read_file`
 * of a 19 MB image held 687 MB). Now a tenant may have twice its
 * concurrentCalls requests open and at most 32 MiB of answers unread, and a
 * connection whose client stops reading is reset.
 */
import anyTest, { type TestFn } from 'ava';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHostingHttpServer } from '../../src/hosting/http/hosting-http-server.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, connectTenant, hostingFolder, listToolsMessage, post, rawMcpPostHead, startHosting } from '../helpers/hosting.js';

const test = await requireDocker(anyTest as TestFn<unknown>, 'hosting/open-responses');

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Read as an image, it comes back whole, base64 in the answer: about 25 MB, more than the kernel takes for a client that does not read. */
const IMAGE_BYTES = 19 * 1024 * 1024;

/** Sends a tools/call for `big.png` over a connection of its own, then reads nothing, ever. */
function unreadCall(port: number, key: string, sessionId: string, id: number): Socket {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_file', arguments: { file_path: 'big.png' } } });
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {}); // reset by the server in the end
  socket.pause();
  socket.write(rawMcpPostHead({ port, key, contentLength: Buffer.byteLength(body), sessionId }) + body);
  return socket;
}

/** Probes with tools/list until one is refused with 429 (a backstop only stops a broken server from hanging the test). */
async function firstRefusal(
  url: string,
  key: string,
  sessionId: string,
): Promise<{ status: number; limit?: string; message: string; retryAfter: string | null }> {
  for (let waited = 0; waited < 60_000; waited += 200) {
    const answer = await post(url, listToolsMessage(), { Authorization: `Bearer ${key}`, 'Mcp-Session-Id': sessionId });
    const text = await answer.text();
    if (answer.status === 429) {
      const error = (JSON.parse(text) as { error: { message: string; data?: { limit?: string } } }).error;
      return {
        status: answer.status,
        message: error.message,
        retryAfter: answer.headers.get('retry-after'),
        ...(error.data?.limit ? { limit: error.data.limit } : {}),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { status: 0, message: 'never refused', retryAfter: null };
}

/** Probes with tools/list until one is answered (the tenant's unread answers were let go). */
async function admittedAgain(url: string, key: string, sessionId: string): Promise<number> {
  let status = 0;
  for (let waited = 0; waited < 60_000 && status !== 200; waited += 200) {
    const answer = await post(url, listToolsMessage(), { Authorization: `Bearer ${key}`, 'Mcp-Session-Id': sessionId });
    await answer.text();
    status = answer.status;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return status;
}

test('a tenant whose client reads none of its answers is held to 32 MiB unread, or twice concurrentCalls open; others are served meanwhile, and it is served again once the stalled connections are reset', async (t) => {
  const dir = await hostingFolder(t);
  const tenantsFile = join(dir, 'tenants.json');
  const workspaces = { acme: join(dir, 'acme'), tiny: join(dir, 'tiny'), beta: join(dir, 'beta') };
  for (const workspace of Object.values(workspaces)) {
    await mkdir(workspace);
    await writeFile(join(workspace, 'big.png'), Buffer.concat([PNG_SIGNATURE, Buffer.alloc(IMAGE_BYTES, 7)]));
  }
  const keys = {
    acme: await addTenant(tenantsFile, 'acme', ['--workspace', workspaces.acme]),
    // Twice 1 open: its second unread answer reaches the count before the bytes.
    tiny: await addTenant(tenantsFile, 'tiny', ['--workspace', workspaces.tiny, '--limit', 'concurrentCalls=1']),
    beta: await addTenant(tenantsFile, 'beta', ['--workspace', workspaces.beta]),
  };
  const hosting = await startHosting({
    tenantsFile,
    dataDir: join(dir, 'data'),
    createListener: (handler) => createHostingHttpServer({ handler, limits: { writeStallMs: 10_000, checkIntervalMs: 100 } }) as Server,
  });
  t.teardown(() => hosting.close());
  const url = hosting.server.url;
  const port = Number(new URL(url).port);
  const sockets: Socket[] = [];
  t.teardown(() => sockets.forEach((socket) => socket.destroy()));

  const cases = [
    {
      tenant: 'acme' as const,
      limit: 'unreadBytes',
      message: /^quota_exceeded: \d+ bytes of this tenant's answers wait for its client to read them \(at most 33554432\)/,
    },
    {
      tenant: 'tiny' as const,
      limit: 'openResponses',
      message: /^quota_exceeded: 2 requests of this tenant are still open .*at most 2 \(twice concurrentCalls\)/,
    },
  ];
  for (const { tenant, limit, message } of cases) {
    const session = await connectTenant(t, url, keys[tenant]);
    // Unread answers, each call sent once the one before has been answered (its event is recorded before its answer
    // goes out), so that concurrentCalls refuses none of them: well past what either limit allows, had nothing refused them.
    // The last is refused at once (a quota_refusal event instead).
    const seen = () =>
      hosting.observer.events.filter((event) => (event.event === 'tool_call' || event.event === 'quota_refusal') && event.tenant === tenant).length;
    for (let id = 1; id <= 3; id++) {
      const before = seen();
      sockets.push(unreadCall(port, keys[tenant], session.sessionId, id));
      await hosting.observer.waitFor(() => seen() > before, 60_000);
    }
    const refusal = await firstRefusal(url, keys[tenant], session.sessionId);
    t.is(refusal.status, 429, `${tenant}: ${refusal.message}`);
    t.is(refusal.limit, limit);
    t.regex(refusal.message, message);
    t.is(refusal.retryAfter, '1');

    // Another tenant is served meanwhile.
    const bystander = await connectTenant(t, url, keys.beta);
    const listed = await bystander.client.listTools();
    t.true(listed.tools.length > 0);
    await bystander.close();

    // The server resets the connections whose client stopped reading; the tenant is served again.
    t.is(await admittedAgain(url, keys[tenant], session.sessionId), 200, `${tenant} is served once its stalled answers are let go`);
  }
  const refusals = hosting.observer.events
    .filter((event) => event.event === 'quota_refusal')
    .map((event) => `${event.tenant}:${(event as { limit?: string }).limit}`);
  t.true(refusals.includes('acme:unreadBytes') && refusals.includes('tiny:openResponses'), refusals.join(', '));
});
