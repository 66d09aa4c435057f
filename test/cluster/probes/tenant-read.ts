/**
 * Run in the hub namespace: opens a tenant's MCP session through a front
 * with the real MCP SDK client and reads one file of its workspace (after a
 * move, the file written before it; checks/tenant-move.ts).
 *   node tenant-read.js KEY FRONT_ADDR FILE
 * → {"session","file"}
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [key, front, file] = process.argv.slice(2) as [string, string, string];
const transport = new StreamableHTTPClientTransport(new URL(`http://${front}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
const client = new Client({ name: 'cluster-probe', version: '1.0.0' });
await client.connect(transport);
const result = await client.callTool({ name: 'read_file', arguments: { file_path: file } }, undefined, { timeout: 120_000 });
const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
const session = transport.sessionId;
await transport.terminateSession();
await client.close();
process.stdout.write(`${JSON.stringify({ session, file: text })}\n`);
