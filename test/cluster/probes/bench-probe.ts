/**
 * Run in the hub namespace for bench/cluster.ts (a client of the cluster).
 *   latency {key, frontCa, clusterCa, paths: {name, kind: "front"|"direct", address: "HOST:PORT", openOnly?}[],
 *            calls, warmup, opens, closeVia: "HOST:PORT" (a front)}
 *     `opens` raw initializes per path, in turn (each session closed again through closeVia: a
 *     session opened at another node lives on the tenant's node), then one MCP session per path
 *     that is not openOnly (the SDK client) and `calls` rounds of a small read_file call, the
 *     paths taken in turn within each round, so every path sees the same machine;
 *     → {opens: {path: [ms…]}, calls: {path: [ms…]}}
 *   opens {keys[], frontCa, fronts[], workers, seconds}
 *     `workers` loops each opening a session (raw initialize through the next front, the next
 *     key) and closing it (DELETE), for `seconds`; → {opened, failed, seconds, errors[]}
 * A direct path is a node's server itself: TLS checked against the cluster's CA and the name
 * every server's certificate carries (toolcell-server).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tlsFetch } from './tls-fetch.js';

const [mode, json] = process.argv.slice(2) as [string, string];
const say = (value: object) => process.stdout.write(`${JSON.stringify(value)}\n`);
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'bench-cluster', version: '1' } },
});

interface Latency {
  key: string;
  frontCa: string;
  clusterCa: string;
  paths: { name: string; kind: 'front' | 'direct'; address: string; openOnly?: boolean }[];
  calls: number;
  warmup: number;
  opens: number;
  closeVia: string;
}
interface Opens {
  keys: string[];
  frontCa: string;
  fronts: string[];
  workers: number;
  seconds: number;
}

if (mode === 'latency') {
  const spec = JSON.parse(json) as Latency;
  const frontFetch = tlsFetch({ ca: readFileSync(spec.frontCa) });
  const directFetch = tlsFetch({ ca: readFileSync(spec.clusterCa), servername: 'toolcell-server' });
  const clients: { name: string; client: Client; transport: StreamableHTTPClientTransport }[] = [];
  const opens: Record<string, number[]> = Object.fromEntries(spec.paths.map((path) => [path.name, []]));
  const auth = { Authorization: `Bearer ${spec.key}` };
  for (let round = 0; round < spec.opens; round++) {
    for (const path of spec.paths) {
      const started = performance.now();
      const answer = await (path.kind === 'front' ? frontFetch : directFetch)(`https://${path.address}/mcp`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: INITIALIZE,
      });
      await answer.text();
      const ms = performance.now() - started;
      const session = answer.headers.get('mcp-session-id');
      if (answer.status !== 200 || session === null) throw new Error(`initialize through ${path.name}: ${answer.status}`);
      opens[path.name]!.push(ms);
      await (await frontFetch(`https://${spec.closeVia}/mcp`, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': session } })).text();
    }
  }
  for (const path of spec.paths.filter((one) => !one.openOnly)) {
    const transport = new StreamableHTTPClientTransport(new URL(`https://${path.address}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${spec.key}` } },
      fetch: path.kind === 'front' ? frontFetch : directFetch,
    });
    const client = new Client({ name: 'bench-cluster', version: '1.0.0' });
    await client.connect(transport);
    clients.push({ name: path.name, client, transport });
  }
  await clients[0]!.client.callTool({ name: 'write_file', arguments: { file_path: 'bench.txt', content: 'a small file for the bench\n' } }, undefined, {
    timeout: 300_000,
  });
  const calls: Record<string, number[]> = Object.fromEntries(clients.map((c) => [c.name, []]));
  for (let round = 0; round < spec.warmup + spec.calls; round++) {
    for (const { name, client } of round % 2 === 0 ? clients : [...clients].reverse()) {
      const started = performance.now();
      const result = await client.callTool({ name: 'read_file', arguments: { file_path: 'bench.txt' } }, undefined, { timeout: 60_000 });
      const ms = performance.now() - started;
      if (result.isError === true) throw new Error(`read_file failed through ${name}: ${JSON.stringify(result.content)}`);
      if (round >= spec.warmup) calls[name]!.push(ms);
    }
  }
  for (const { transport, client } of clients) {
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
  say({ opens, calls });
} else if (mode === 'opens') {
  const spec = JSON.parse(json) as Opens;
  const fetchTls = tlsFetch({ ca: readFileSync(spec.frontCa) });
  const body = INITIALIZE;
  let opened = 0;
  let failed = 0;
  let turn = 0;
  const errors: string[] = [];
  const started = performance.now();
  const until = started + spec.seconds * 1000;
  await Promise.all(
    Array.from({ length: spec.workers }, async () => {
      while (performance.now() < until) {
        const i = turn++;
        const front = spec.fronts[i % spec.fronts.length]!;
        const key = spec.keys[i % spec.keys.length]!;
        try {
          const auth = { Authorization: `Bearer ${key}` };
          const answer = await fetchTls(`https://${front}/mcp`, {
            method: 'POST',
            headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
            body,
          });
          await answer.text();
          const session = answer.headers.get('mcp-session-id');
          if (answer.status !== 200 || session === null) throw new Error(`status ${answer.status}`);
          await (await fetchTls(`https://${front}/mcp`, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': session } })).text();
          opened++;
        } catch (error) {
          failed++;
          if (errors.length < 5) errors.push((error as Error).message);
        }
      }
    }),
  );
  say({ opened, failed, seconds: (performance.now() - started) / 1000, errors });
} else {
  process.stderr.write('usage: bench-probe.js latency|opens JSON\n');
  process.exitCode = 2;
}
