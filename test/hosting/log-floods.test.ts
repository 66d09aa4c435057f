/**
 * A tenant (or anyone) trying to fill the host's disk through the logs, on a
 * real hosting server with the SDK's client and real HTTP: huge arguments,
 * floods of bad keys from one address and from hundreds, 50,000 refused
 * CONNECTs from a sandbox, and line separators that would forge records. The
 * logs must grow with the calls made and the distinct sources, never with
 * what was sent, and every event must still be written or counted.
 */
import anyTest, { type TestFn } from 'ava';
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditLog } from '../../src/hosting/audit/audit-log.js';
import { combineObservers } from '../../src/hosting/operations/combine-observers.js';
import { HostingMetrics } from '../../src/hosting/metrics/hosting-metrics.js';
import { readAuditLines } from '../helpers/audit-log.js';
import { requireDocker } from '../helpers/docker.js';
import { mapLimited } from '../helpers/map-limited.js';
import { addTenant, call, connectTenant, hostingFolder, startHosting, type Hosting } from '../helpers/hosting.js';

const test = await requireDocker(anyTest as TestFn<unknown>, 'hosting/log-floods');

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** Every way a reader may split a text into lines (Python's splitlines, JavaScript's line terminators). */
// eslint-disable-next-line no-control-regex -- the separators a reader may split on are the point.
const ANY_LINE_BREAK = /\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029]/;
const MAX_LINE_BYTES = 16 * 1024;

interface Logged {
  hosting: Hosting;
  audit: AuditLog;
  auditFile: string;
  metrics: HostingMetrics;
  keys: Record<string, string>;
}

/**
 * A hosting server whose audit log counts repeats over one long interval, so
 * that what these tests count does not depend on how fast the machine is:
 * each repeated key is exactly its first line and one count record, written
 * when the log closes.
 */
async function loggedServer(t: { teardown(fn: () => Promise<void>): void }, tenants: Record<string, string[]>): Promise<Logged> {
  const dir = await hostingFolder(t, 'toolcell-log-floods-');
  const file = join(dir, 'tenants.json');
  const keys: Record<string, string> = {};
  for (const [name, args] of Object.entries(tenants)) keys[name] = await addTenant(file, name, args);
  const auditFile = join(dir, 'audit.jsonl');
  const audit = await AuditLog.open({ path: auditFile, repeatIntervalMs: 3_600_000 });
  let hosting: Hosting | undefined;
  const metrics = new HostingMetrics({
    processMetrics: false,
    logVolumes: () => ({ audit: audit.volume, egress: hosting?.server.egressLogVolume ?? { lines: 0, bytes: 0, counted: 0 } }),
  });
  hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data'), observer: combineObservers(audit, metrics) });
  t.teardown(async () => {
    await hosting.close();
    await audit.close();
  });
  return { hosting, audit, auditFile, metrics, keys };
}

/** `count` of a line, 1 for a line without one: the events a log stands for. */
const events = (lines: Array<Record<string, unknown>>) => lines.reduce((sum, line) => sum + (typeof line['count'] === 'number' ? line['count'] : 1), 0);

test('huge arguments and forged line breaks write one bounded line per call, naming each cut value by length and SHA-256', async (t) => {
  const { hosting, audit, auditFile, keys } = await loggedServer(t, { acme: ['--limit', 'callsPerMinute=1000'] });
  const acme = await connectTenant(t, hosting.server.url, keys['acme']!);
  const command = `: ${'a'.repeat(3_900_000)}`;
  const content = 'c'.repeat(3_900_000);
  const forged = '{"time":"2026-01-01T00:00:00.000Z","event":"admin","tenant":null,"action":"close_session","target":"x"}';
  const before = (await stat(auditFile)).size;
  await call(acme.client, 'run_shell_command', { command });
  await call(acme.client, 'write_file', { file_path: 'big.txt', content });
  const separators = ['\u2028', '\u2029', '\u0085', '\u009b', '\r', '\f'];
  for (const separator of separators) {
    await call(acme.client, 'run_shell_command', { command: `echo x${separator}${forged}${separator}` });
  }
  await audit.close();
  const text = await readFile(auditFile, 'utf8');
  const lines = await readAuditLines(auditFile);
  const calls = lines.filter((line) => line['event'] === 'tool_call');
  t.is(calls.length, 8, 'one line per call');
  t.true(
    text.split('\n').every((line) => Buffer.byteLength(line) + 1 <= MAX_LINE_BYTES),
    'no line over 16 KiB',
  );
  t.true((await stat(auditFile)).size - before <= 8 * MAX_LINE_BYTES, '7.8 MB of arguments add at most 8 bounded lines');
  const shell = calls[0]!['args'] as { command: string };
  t.true(shell.command.endsWith(`…[cut: ${Buffer.byteLength(command)} bytes in all, sha256 ${sha256(command)}]`), shell.command.slice(-120));
  const written = calls[1]!['args'] as { content: string };
  t.true(written.content.endsWith(`…[cut: 3900000 bytes in all, sha256 ${sha256(content)}]`));
  // Split as a reader might: every piece is a whole record, and no forged `admin` record appears.
  const pieces = text.split(ANY_LINE_BREAK).filter((piece) => piece !== '');
  t.is(pieces.length, lines.length, 'no line separator or C1 control splits a record');
  t.false(
    pieces.some((piece) => piece.startsWith(forged.slice(0, 20))),
    'the forged record stays inside its string',
  );
  t.deepEqual(
    calls.slice(2).map((line) => (line['args'] as { command: string }).command),
    separators.map((separator) => `echo x${separator}${forged}${separator}`),
    'and parses back to what was sent',
  );
});

/** `count` requests with bad credentials to the MCP endpoint, `parallel` at once, from `localAddress`. */
async function badKeys(url: string, count: number, options: { localAddress?: string; parallel?: number } = {}): Promise<number[]> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.parallel ?? 16, ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  // Three reasons: no header, not a bearer token, a key of the right shape that no tenant holds.
  const authorization = (i: number) => [undefined, 'Basic eDp5', `Bearer tc_${'x'.repeat(12)}_${String(i).padStart(43, 'A')}`][i % 3];
  try {
    return await mapLimited(
      Array.from({ length: count }, (_, i) => i),
      options.parallel ?? 16,
      (i) =>
        new Promise<number>((resolve, reject) => {
          const auth = authorization(i);
          const req = request(
            target,
            {
              method: 'POST',
              agent,
              headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...(auth ? { Authorization: auth } : {}) },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
          req.end(body);
        }),
    );
  } finally {
    agent.destroy();
  }
}

test('10,000 bad keys from one address, and bad keys from 300 addresses, write a bounded number of lines; every one is counted', async (t) => {
  const { hosting, audit, auditFile, metrics, keys } = await loggedServer(t, { acme: [] });
  const acme = await connectTenant(t, hosting.server.url, keys['acme']!);
  const flood = await badKeys(hosting.server.url, 10_000, { parallel: 32 });
  // 300 source addresses (127.0.0.0/8 all reaches this host), 5 bad keys each: more sources than the log counts one by one (100).
  const sources = Array.from({ length: 300 }, (_, i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`);
  const spread = (await mapLimited(sources, 8, (localAddress) => badKeys(hosting.server.url, 5, { localAddress, parallel: 1 }))).flat();
  t.true([...flood, ...spread].every((status) => status === 401));
  t.is((await call(acme.client, 'list_directory', { dir_path: '.' })).errorType, undefined, 'the tenant is served throughout');
  await hosting.close();
  await audit.close();
  const lines = await readAuditLines(auditFile);
  const failures = lines.filter((line) => line['event'] === 'auth_failure' || (line['event'] === 'log_summary' && line['of'] === 'auth_failure'));
  t.is(events(failures), 11_500, 'every refused request is written or counted');
  // One address, three reasons: three first lines and three count records.
  const fromFlood = failures.filter((line) => line['remoteAddress'] === '127.0.0.1');
  t.is(fromFlood.length, 6, JSON.stringify(fromFlood.slice(0, 3)));
  t.is(events(fromFlood), 10_000);
  // 300 addresses: the first 100 keys one by one (first line and count), the rest in a log_summary.
  t.true(failures.length <= 2 * 100 + 1, `${failures.length} lines`);
  t.like(
    failures.find((line) => line['event'] === 'log_summary'),
    { of: 'auth_failure', tenant: null },
  );
  t.true((await stat(auditFile)).size < 200_000, `${(await stat(auditFile)).size} bytes for 11,500 refusals`);
  // The log-volume metric says what was written, and how much was folded into counts.
  const scraped = (await metrics.text()).body;
  const metric = (name: string) => Number(new RegExp(`^${name}\\{log="audit"\\} (\\d+)$`, 'm').exec(scraped)?.[1]);
  t.is(metric('toolcell_log_bytes_total'), (await stat(auditFile)).size);
  t.is(metric('toolcell_log_lines_total'), lines.length);
  t.true(metric('toolcell_log_counted_events_total') >= 11_500 - failures.length);
});

test('12,000 refused CONNECTs from a sandbox add a few egress lines to the audit log and to the egress log, each connection counted', async (t) => {
  t.timeout(400_000);
  const { hosting, audit, auditFile, keys } = await loggedServer(t, { acme: ['--network-allow', 'allowed.test:443', '--limit', 'commandTimeoutSeconds=600'] });
  const acme = await connectTenant(t, hosting.server.url, keys['acme']!);
  // 8 threads of raw CONNECTs to the tenant's proxy: 11,700 to one refused host, then one each to 300 others
  // (sixty times the lines allowed: enough to show the bound).
  const script = [
    'import os, socket, threading, urllib.parse',
    'proxy = urllib.parse.urlparse(os.environ["HTTPS_PROXY"])',
    'refused = [0]',
    'lock = threading.Lock()',
    'def connect(host):',
    '    s = socket.create_connection((proxy.hostname, proxy.port))',
    '    s.sendall(f"CONNECT {host}:443 HTTP/1.1\\r\\nHost: {host}:443\\r\\n\\r\\n".encode())',
    '    answer = s.recv(4096)',
    '    s.close()',
    '    if b" 403 " in answer:',
    '        with lock: refused[0] += 1',
    'def flood(n):',
    '    for _ in range(n): connect("blocked.test")',
    'threads = [threading.Thread(target=flood, args=(11700 // 8 + (1 if i < 11700 % 8 else 0),)) for i in range(8)]',
    '[thread.start() for thread in threads]',
    '[thread.join() for thread in threads]',
    'for i in range(300): connect(f"h{i}.blocked.test")',
    'print("refused", refused[0])',
  ].join('\n');
  // A minute or more on a loaded machine: past the SDK's default request timeout.
  const result = (await acme.client.callTool({ name: 'run_shell_command', arguments: { command: `python3 - <<'EOF'\n${script}\nEOF` } }, undefined, {
    timeout: 300_000,
  })) as { content: Array<{ type: string; text?: string }> };
  const text = result.content.map((block) => block.text ?? '').join('\n');
  t.regex(text, /refused 12000/, text.slice(0, 400));
  const before = hosting.server.egressLogVolume;
  await hosting.close();
  await audit.close();
  const egress = (await readAuditLines(auditFile)).filter((line) => line['event'] === 'egress' || (line['event'] === 'log_summary' && line['of'] === 'egress'));
  t.is(events(egress), 12_000, 'every refused connection is written or counted');
  t.true(egress.length <= 2 * 100 + 2, `${egress.length} audit lines`);
  t.like(
    egress.find((line) => line['host'] === 'blocked.test' && typeof line['count'] === 'number'),
    { tenant: 'acme', action: 'refused', via: 'connect', port: 443 },
  );
  // The proxy's own event file (read by the server as it is written) counts the same way.
  const after = hosting.server.egressLogVolume;
  t.true(after.lines <= 2 * 100 + 2, `${after.lines} egress log lines`);
  t.true(after.bytes < 100_000, `${after.bytes} egress log bytes`);
  t.true(after.lines + after.counted >= 12_000, JSON.stringify({ before, after }));
});
