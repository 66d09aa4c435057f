/**
 * Run in the hub namespace: one or more calls to etcd's JSON gateway over
 * client TLS (the name checked is "etcd", on every member's certificate).
 *   node etcd-call.js CERTS ADDR PATH BODY [PATH BODY…]
 * → {"results":[{"status","body"}…]}; status 0 when the member did not answer (10 s a call).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

const [certs, addr, ...calls] = process.argv.slice(2) as [string, string, ...string[]];
const [host, port] = addr.split(':') as [string, string];
const tls = {
  ca: readFileSync(join(certs, 'ca.pem')),
  cert: readFileSync(join(certs, 'toolcell-server.pem')),
  key: readFileSync(join(certs, 'toolcell-server-key.pem')),
  servername: 'etcd',
};

function call(path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host, port: Number(port), path, method: 'POST', ...tls, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', (error) => resolve({ status: 0, body: error.message }));
    });
    req.on('error', (error) => resolve({ status: 0, body: error.message }));
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.end(body);
  });
}

const results: { status: number; body: string }[] = [];
for (let i = 0; i + 1 < calls.length; i += 2) results.push(await call(calls[i]!, calls[i + 1]!));
process.stdout.write(JSON.stringify({ results }));
