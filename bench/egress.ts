/**
 * What the egress proxy costs a sandboxed client: curl's own connection
 * timings inside a container on the egress network (through the proxy, by a
 * listed name) against the same curl in a container on Docker's open bridge
 * network connecting directly, in one run, to a local server.
 *   npm run build && node dist/bench/egress.js [requests per case, default 200]
 * Target (issue 12): the proxy adds at most 2 ms per connection.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realpath, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ShellSession } from '../src/backends/backend.js';
import { createDockerBackend } from '../src/backends/docker/docker-backend.js';
import { fmt, percentile, sortNumbers } from './stats.js';

const requests = Number(process.argv[2] ?? 200);
const BRIDGE_HOST = '172.17.0.1';

const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n'));
await new Promise<void>((resolve) => server.listen({ host: '0.0.0.0', port: 0 }, resolve));
const port = (server.address() as AddressInfo).port;
const workspace = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-bench-egress-')));

const proxied = await createDockerBackend({
  warmPool: 0,
  egress: { allow: [`allowed.test:${port}`, `${BRIDGE_HOST}:${port}`], hosts: { 'allowed.test': BRIDGE_HOST } },
});
const open = await createDockerBackend({ warmPool: 0, hardening: { network: 'bridge' } });

/** Runs `requests` curls in one command and returns curl's time_total of each, in ms. */
async function timings(session: ShellSession, url: string, extra = ''): Promise<number[]> {
  const spawned = await session.spawn({
    command: `for i in $(seq ${requests}); do curl -sS -o /dev/null ${extra} -w '%{time_total}\\n' ${url} || echo fail; done`,
    cwd: '.',
    env: { PATH: '/usr/bin:/bin', HOME: '/tmp' },
    mode: 'pipes',
  });
  let out = '';
  spawned.onData((chunk) => (out += Buffer.from(chunk).toString('utf8')));
  await spawned.exited;
  const lines = out.trim().split('\n');
  const failed = lines.filter((line) => line === 'fail').length;
  if (failed > 0) throw new Error(`${failed} of ${requests} requests failed: ${out.slice(0, 400)}`);
  return sortNumbers(lines.map((line) => Number(line) * 1000));
}

try {
  const viaProxy = await proxied.openSession({ sessionId: 'bench-proxied', workspaceRoot: workspace });
  const direct = await open.openSession({ sessionId: 'bench-open', workspaceRoot: workspace });
  // Warm both paths (ARP, the proxy's first lookup, curl's page cache).
  await timings(viaProxy, `http://allowed.test:${port}/`);
  await timings(direct, `http://${BRIDGE_HOST}:${port}/`, "--noproxy '*'");
  const rounds: { proxy: number[]; direct: number[] }[] = [];
  // Interleaved rounds, so machine noise falls on both alike.
  for (let round = 0; round < 3; round++) {
    rounds.push({
      proxy: await timings(viaProxy, `http://allowed.test:${port}/`),
      direct: await timings(direct, `http://${BRIDGE_HOST}:${port}/`, "--noproxy '*'"),
    });
  }
  const proxyAll = sortNumbers(rounds.flatMap((round) => round.proxy));
  const directAll = sortNumbers(rounds.flatMap((round) => round.direct));
  const p50 = percentile(proxyAll, 50) - percentile(directAll, 50);
  const p99 = percentile(proxyAll, 99) - percentile(directAll, 99);
  console.log(`egress proxy overhead: ${proxyAll.length} HTTP requests per case, curl's time_total inside the container`);
  console.log(`  direct on the open bridge network   p50 ${fmt(percentile(directAll, 50))}   p99 ${fmt(percentile(directAll, 99))}`);
  console.log(`  through the egress proxy (by name)  p50 ${fmt(percentile(proxyAll, 50))}   p99 ${fmt(percentile(proxyAll, 99))}`);
  console.log(
    `  added by the proxy                  p50 ${fmt(p50)}   p99 ${fmt(p99)}   ratio p50 ${(percentile(proxyAll, 50) / percentile(directAll, 50)).toFixed(2)}×   target: ≤ 2 ms per connection: ${p50 <= 2 ? 'met' : 'NOT met'}`,
  );
  await viaProxy.close();
  await direct.close();
} finally {
  await proxied.close();
  await open.close();
  server.close();
  server.closeAllConnections();
  await rm(workspace, { recursive: true, force: true });
}
