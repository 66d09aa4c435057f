/**
 * Run in the hub namespace: a tenant's MCP session through the fronts, with
 * the real MCP SDK client. Every request of the session goes to the next
 * front in turn (a fetch that rotates the address), so each is routed by a
 * different node's HAProxy; only the session's own node knows the session.
 *   node mcp-tenant.js CA KEY FRONT_ADDR…   (HTTPS, the front's certificate checked against CA)
 * → {"session","shell","file","requests":[front addr per request]}
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync } from 'node:fs';
import { tlsFetch } from './tls-fetch.js';

const [ca, key, ...fronts] = process.argv.slice(2) as [string, string, ...string[]];
const fetchTls = tlsFetch({ ca: readFileSync(ca) });
const requests: string[] = [];
let turn = 0;
const rotating: typeof fetch = (input, init) => {
  const front = fronts[turn++ % fronts.length]!;
  requests.push(front);
  const url = new URL(input instanceof Request ? input.url : String(input));
  url.host = front;
  return fetchTls(url, init);
};

const transport = new StreamableHTTPClientTransport(new URL(`https://${fronts[0]}/mcp`), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
  fetch: rotating,
});
const client = new Client({ name: 'cluster-probe', version: '1.0.0' });
await client.connect(transport);

const text = (result: Awaited<ReturnType<typeof client.callTool>>): string =>
  (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
const shell = text(
  await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo shell-$((6 * 7)) && id -u' } }, undefined, { timeout: 300_000 }),
);
const written = `written on its node ${Date.now()}`;
await client.callTool({ name: 'write_file', arguments: { file_path: 'note.txt', content: written } }, undefined, { timeout: 120_000 });
const file = text(await client.callTool({ name: 'read_file', arguments: { file_path: 'note.txt' } }, undefined, { timeout: 120_000 }));
const session = transport.sessionId;
await transport.terminateSession();
await client.close();
process.stdout.write(`${JSON.stringify({ session, shell, file, written, requests })}\n`);
