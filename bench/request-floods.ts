/**
 * bench/request-floods: what floods of requests cost a hosting server (real
 * Docker, real HTTP), side by side in one run.
 *
 * Prints: the server's RSS before, during and after N connections that each
 * announce a 4 MiB body and stall before its last byte (sent from a child
 * process, so the attacker's own buffers are not counted), once with the
 * default body budget and once with a budget too large to matter; the audit
 * log's growth under 40,000 bad keys; and how many sessions a tenant opening
 * and closing in a loop gets in 10 s. Nothing is asserted: figures only.
 *
 *   npx tsc -p tsconfig.json && node --expose-gc dist/bench/request-floods.js   (BENCH_STALLED=400 for more connections)
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ApiKeyAuthenticator, generateApiKey } from '../src/hosting/auth/api-key.js';
import { AuditLog } from '../src/hosting/audit/audit-log.js';
import { HostingServer, type HostingServerOptions } from '../src/hosting/server/hosting-server.js';
import { TenantStore } from '../src/hosting/tenants/tenant-store.js';
import { emptyTenantsFile, writeTenantsFile } from '../src/hosting/tenants/tenants-file.js';
import { createRuntime, type Runtime } from '../src/runtime/runtime.js';

const MiB = 1024 * 1024;
const STALLED = Number(process.env['BENCH_STALLED'] ?? 100);

/** Child mode: `attack PORT KEY COUNT` opens COUNT stalled POSTs and keeps them until killed. */
if (process.argv[2] === 'attack') {
  const [port, key, count] = [Number(process.argv[3]), process.argv[4]!, Number(process.argv[5])];
  const body = Buffer.alloc(4 * MiB - 1, 0x20);
  let answered = 0;
  for (let i = 0; i < count; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.on('data', () => {});
    socket.on('close', () => void (++answered === count && process.stdout.write('all answered\n')));
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${4 * MiB}\r\n\r\n`,
    );
    socket.write(body);
  }
  process.stdout.write('sent\n');
  await new Promise(() => {});
}

const rssMiB = (): string => (process.memoryUsage().rss / MiB).toFixed(0);
const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

async function serverWith(
  dir: string,
  runtime: Runtime,
  extra: Partial<HostingServerOptions>,
): Promise<{ server: HostingServer; store: TenantStore; keys: string[] }> {
  const file = join(dir, `tenants-${Math.random().toString(36).slice(2)}.json`);
  const content = emptyTenantsFile();
  const keys: string[] = [];
  for (const name of ['a', 'b', 'c', 'd']) {
    const key = generateApiKey();
    keys.push(key.key);
    content.tenants[name] = { keys: [{ id: key.id, hash: key.hash, createdAt: new Date().toISOString() }], limits: { sessionsPerMinute: 30 } };
  }
  await writeTenantsFile(file, content);
  const store = await TenantStore.open({ file });
  const server = await HostingServer.start({ store, runtime, authenticators: [new ApiKeyAuthenticator(store)], dataDir: join(dir, 'data'), port: 0, ...extra });
  return { server, store, keys };
}

/** Runs the stalled-body attack from a child process against `server`; the server's RSS before, at its peak and after. */
async function stalledBodies(server: HostingServer, keys: string[]): Promise<{ before: string; peak: string; held: string; after: string; answered: boolean }> {
  await settle();
  const before = rssMiB();
  const children = keys.map((key) =>
    spawn(process.execPath, [fileURLToPath(import.meta.url), 'attack', String(server.port), key, String(Math.ceil(STALLED / keys.length))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  let peak = 0;
  let held = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
    held = Math.max(held, server.bufferedBodyBytes);
  }, 50);
  // Each child says when every one of its connections was answered (413/503 at once, or 408 at the read timeout).
  const answered = await Promise.race([
    Promise.all(
      children.map((child) => new Promise<void>((resolve) => child.stdout!.on('data', (chunk: Buffer) => chunk.includes('all answered') && resolve()))),
    ).then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 60_000)),
  ]);
  clearInterval(sampler);
  for (const child of children) child.kill('SIGKILL');
  await settle();
  return { before, peak: (peak / MiB).toFixed(0), held: (held / MiB).toFixed(0), after: rssMiB(), answered };
}

const dir = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-bench-floods-')));
const runtime = await createRuntime({ workspace: dir, approvalMode: 'yolo', sandbox: 'docker', onWarning: () => {} });
try {
  console.log(`bench/request-floods: ${STALLED} stalled 4 MiB bodies over 4 tenants, from a child process; RSS of the server process in MiB`);
  for (const [label, bodies] of [
    ['default budget (16 MiB a tenant, 64 MiB in all)', { readTimeoutMs: 10_000 }],
    ['no real budget (64 GiB)', { readTimeoutMs: 10_000, tenantBytes: 64 * 1024 * MiB, serverBytes: 64 * 1024 * MiB }],
  ] as const) {
    const { server, store, keys } = await serverWith(dir, runtime, { requestBodies: bodies });
    const figures = await stalledBodies(server, keys);
    console.log(
      `  ${label.padEnd(48)} before ${figures.before}, peak ${figures.peak}, after ${figures.after}; bodies held at most ${figures.held} MiB${figures.answered ? '' : ' (some never answered within 60 s)'}`,
    );
    await server.close();
    store.close();
  }

  const auditFile = join(dir, 'audit.jsonl');
  const audit = await AuditLog.open({ path: auditFile });
  const logged = await serverWith(dir, runtime, { observer: audit });
  const started = performance.now();
  const agentless = Array.from({ length: 40_000 }, (_, i) => `tc_${'x'.repeat(12)}_${String(i).padStart(43, 'A')}`);
  for (let at = 0; at < agentless.length; at += 64) {
    await Promise.all(
      agentless
        .slice(at, at + 64)
        .map((key) => fetch(logged.server.url, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: '{}' }).then((r) => r.arrayBuffer())),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  await logged.server.close();
  logged.store.close();
  await audit.close();
  console.log(
    `\n40,000 bad keys in ${seconds.toFixed(1)} s: audit log ${(await stat(auditFile)).size} bytes in ${audit.volume.lines} lines, ${audit.volume.counted} refusals counted in them (before: one line, ~130 bytes, each)`,
  );

  const churn = await serverWith(dir, runtime, {});
  let opened = 0;
  const refused = new Map<string, number>();
  const until = performance.now() + 10_000;
  // Four loops at once (the tenant's sessions limit), as a script would: open, close, open again.
  const loop = async (): Promise<void> => {
    while (performance.now() < until) {
      const client = new Client({ name: 'bench-churn', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(churn.server.url), {
        requestInit: { headers: { Authorization: `Bearer ${churn.keys[0]}` } },
      });
      try {
        await client.connect(transport);
        opened++;
        await transport.terminateSession();
      } catch (error) {
        const status = String((error as { code?: unknown }).code ?? 'other');
        refused.set(status, (refused.get(status) ?? 0) + 1);
      }
      await client.close().catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: 4 }, loop));
  await churn.server.close();
  churn.store.close();
  console.log(
    `\nsession churn for 10 s, one tenant in 4 loops (sessions 4, sessionsPerMinute 30): ${opened} opened; refused: ${[...refused].map(([status, count]) => `${count} with ${status}`).join(', ') || 'none'}`,
  );
} finally {
  await runtime.close();
  await rm(dir, { recursive: true, force: true });
}
