/**
 * Run in the hub namespace: revokes a tenant's keys with `toolcell tenant
 * revoke --etcd` through one etcd member, then asks every node's server
 * directly (TLS, the cluster's CA) to open a session with the key until
 * each refuses it (401). Before the revocation each node must open one (a
 * node the tenant does not live on forwards it to the tenant's node).
 *   node revoke-everywhere.js CERTS SERVER_PORT NODE_ADDRS(comma) KEY -- REVOKE_COMMAND…
 * → {"before":[status per node],"refusedAfterMs":[ms per node, from the revoke command's exit]}
 * Each node is polled every 20 ms for at most 20 s.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

const [certs, portText, addrs, key, separator, ...revoke] = process.argv.slice(2) as [string, string, string, string, string, ...string[]];
if (separator !== '--' || revoke.length === 0) throw new Error('usage: CERTS PORT ADDRS KEY -- COMMAND…');
const ca = readFileSync(join(certs, 'ca.pem'));
const nodes = addrs.split(',');
const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'revoke-probe', version: '1' } },
});

function open(host: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      {
        host,
        port: Number(portText),
        path: '/mcp',
        method: 'POST',
        ca,
        servername: 'toolcell-server',
        timeout: 10_000,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.destroy();
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end(initialize);
  });
}

const before: number[] = [];
for (const host of nodes) before.push(await open(host));
const ran = spawnSync(revoke[0]!, revoke.slice(1), { encoding: 'utf8' });
if (ran.status !== 0) throw new Error(`revoke failed: ${ran.stderr}`);
const revokedAt = Date.now();
const refusedAfterMs = await Promise.all(
  nodes.map(async (host) => {
    while (Date.now() - revokedAt < 20_000) {
      if ((await open(host)) === 401) return Date.now() - revokedAt;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return -1;
  }),
);
process.stdout.write(`${JSON.stringify({ before, refusedAfterMs })}\n`);
