/**
 * Run in the hub namespace: one tenant's MCP session through the fronts
 * (HTTPS, the front's certificate checked against CA) with the real MCP SDK
 * client, each request through the next front in turn. The script, one
 * JSON argument:
 *   { key, ca, fronts: ["ADDR:PORT"…], session?: id to go on with (no new initialize),
 *     steps?: [{ tool, args, timeoutMs? }], keep?: true (leave the session open),
 *     initializeOnly?: true (one raw initialize POST: its status, Retry-After, body; closed again) }
 * → { session?, opened?, results: [{ ok, text?, error?, startedAt, endedAt }], error?, status?, retryAfter?, body? }
 * A failure to open the session is `error` (with the SDK's message, which carries the HTTP
 * status); a failed step is that step's `ok: false`, and the steps after it are not run.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tlsFetch } from './tls-fetch.js';

interface Script {
  key: string;
  ca: string;
  fronts: string[];
  session?: string;
  steps?: { tool: string; args: Record<string, unknown>; timeoutMs?: number }[];
  keep?: boolean;
  initializeOnly?: boolean;
}
interface StepResult {
  ok: boolean;
  text?: string;
  error?: string;
  startedAt: number;
  endedAt: number;
}

const script = JSON.parse(process.argv[2]!) as Script;
const base = tlsFetch({ ca: readFileSync(script.ca) });
let turn = 0;
const rotating: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  url.host = script.fronts[turn++ % script.fronts.length]!;
  return base(url, init);
};
const say = (value: object) => process.stdout.write(`${JSON.stringify(value)}\n`);
const auth = { Authorization: `Bearer ${script.key}` };

if (script.initializeOnly) {
  try {
    const response = await rotating(`https://${script.fronts[0]}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'cluster-probe', version: '1' } },
      }),
      signal: AbortSignal.timeout(45_000),
    });
    const body = await response.text();
    const session = response.headers.get('mcp-session-id') ?? undefined;
    if (session !== undefined)
      await rotating(`https://${script.fronts[0]}/mcp`, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': session } }).then((r) => r.text());
    say({ status: response.status, retryAfter: response.headers.get('retry-after') ?? undefined, body: body.slice(0, 400), session, results: [] });
  } catch (error) {
    say({ status: 0, error: (error as Error).message, results: [] });
  }
  process.exit(0);
}

const transport = new StreamableHTTPClientTransport(new URL(`https://${script.fronts[0]}/mcp`), {
  requestInit: { headers: auth },
  fetch: rotating,
  ...(script.session !== undefined ? { sessionId: script.session } : {}),
});
const client = new Client({ name: 'cluster-probe', version: '1.0.0' });
try {
  await client.connect(transport);
} catch (error) {
  say({ error: (error as Error).message, results: [] });
  process.exit(0);
}
const results: StepResult[] = [];
for (const step of script.steps ?? []) {
  const startedAt = Date.now();
  try {
    const result = await client.callTool({ name: step.tool, arguments: step.args }, undefined, { timeout: step.timeoutMs ?? 120_000 });
    const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
    results.push({ ok: result.isError !== true, text, startedAt, endedAt: Date.now() });
    if (result.isError === true) break;
  } catch (error) {
    results.push({ ok: false, error: (error as Error).message, startedAt, endedAt: Date.now() });
    break;
  }
}
const session = transport.sessionId;
if (!script.keep) await transport.terminateSession().catch(() => undefined);
await client.close().catch(() => undefined);
say({ session, results });
process.exit(0);
