/**
 * Run in the hub namespace: how long a change written through one node's
 * etcd member takes to reach a watcher on another node's member, over
 * etcd's JSON gateway with client TLS (the name checked is "etcd", which
 * every member's certificate carries).
 *   node etcd-watch.js CERTS WATCH_ADDR PUT_ADDR ROUNDS KEY
 * → {"latenciesMs":[…]} : from the put's request to the watch's event, each.
 * Every wait is bounded (2 s an event, the bound for a revoked key).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

const [certs, watchAddr, putAddr, roundsText, key] = process.argv.slice(2) as [string, string, string, string, string];
const tls = {
  ca: readFileSync(join(certs, 'ca.pem')),
  cert: readFileSync(join(certs, 'toolcell-server.pem')),
  key: readFileSync(join(certs, 'toolcell-server-key.pem')),
  servername: 'etcd',
};
const b64 = (text: string) => Buffer.from(text).toString('base64');

function call(addr: string, path: string, body: unknown, onLine?: (line: string) => void): Promise<string> {
  const [host, port] = addr.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const req = request({ host, port: Number(port), path, method: 'POST', ...tls, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      let pending = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (onLine === undefined) return;
        pending += chunk.toString();
        for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
          onLine(pending.slice(0, at));
          pending = pending.slice(at + 1);
        }
      });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${addr}${path}: no answer in 10 s`)));
    req.end(JSON.stringify(body));
  });
}

const latencies: number[] = [];
let waiting: ((value: string) => void) | undefined;
const watchReq = call(watchAddr, '/v3/watch', { create_request: { key: b64(key) } }, (line) => {
  const parsed = JSON.parse(line) as { result?: { events?: { kv: { value: string } }[] } };
  for (const event of parsed.result?.events ?? []) waiting?.(Buffer.from(event.kv.value, 'base64').toString());
}).catch(() => '');
// The watch is created when its first line comes; a short settle is enough, and a put before it would only be missed (then the round times out).
await new Promise((resolve) => setTimeout(resolve, 500));
for (let round = 0; round < Number(roundsText); round++) {
  const value = `v${round}-${Date.now()}`;
  const seen = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`round ${round}: no watch event within 2 s`)), 2000);
    waiting = (got) => {
      if (got !== value) return;
      clearTimeout(timer);
      resolve(performance.now());
    };
  });
  const start = performance.now();
  await call(putAddr, '/v3/kv/put', { key: b64(key), value: b64(value) });
  latencies.push(Math.round((await seen) - start));
}
process.stdout.write(JSON.stringify({ latenciesMs: latencies }));
void watchReq;
process.exit(0);
