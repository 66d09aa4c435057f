import test from 'ava';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { probeDocker } from '../../src/backends/docker/probe.js';
import { dockerReadiness } from '../../src/hosting/health/docker-readiness.js';
import { allReady, createReadyzHandler, healthzHandler, type ReadinessCheck } from '../../src/hosting/health/health-handlers.js';
import { HostingMetrics } from '../../src/hosting/metrics/hosting-metrics.js';
import { parseListenAddress, serveMetrics } from '../../src/hosting/metrics/serve-metrics.js';
import type { RequestHandler } from '../../src/hosting/http/request-handler.js';

function countEvents(metrics: HostingMetrics): void {
  const call = { event: 'tool_call', session: 's', callId: 'c', tool: 'run_shell_command', args: {}, decision: 'allow', outputBytes: 1 } as const;
  metrics.record({ ...call, tenant: 'acme', outcome: 'success', durationMs: 20 });
  metrics.record({ ...call, tenant: 'acme', outcome: 'success', durationMs: 2000 });
  metrics.record({ ...call, tenant: 'globex', outcome: 'error', durationMs: 5 });
  metrics.record({ event: 'quota_refusal', tenant: 'acme', limit: 'callsPerMinute' });
  metrics.record({ event: 'auth_failure', remoteAddress: '10.0.0.1', reason: 'unknown_key' });
  metrics.record({ event: 'auth_failure', remoteAddress: '10.0.0.1', reason: 'unknown_key' });
  metrics.record({ event: 'session_open', tenant: 'acme', subject: 'k1', via: 'api_key', session: 's' });
  metrics.record({ event: 'admin', action: 'list_sessions' });
}

test('/metrics serves the counters, the histogram and the gauges read at scrape time, on loopback by default', async (t) => {
  let sessions = 3;
  const metrics = new HostingMetrics({ liveSessions: () => sessions, liveContainers: async () => 2, queuedCalls: () => 0 });
  countEvents(metrics);
  const server = await serveMetrics({ metrics, port: 0 });
  t.teardown(() => server.close());
  t.regex(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const response = await fetch(`${server.url}/metrics`);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  t.regex(text, /^toolcell_tool_calls_total\{tenant="acme",outcome="success"\} 2$/m);
  t.regex(text, /^toolcell_tool_calls_total\{tenant="globex",outcome="error"\} 1$/m);
  t.regex(text, /^toolcell_tool_call_duration_seconds_bucket\{le="0\.025",tenant="acme"\} 1$/m);
  t.regex(text, /^toolcell_tool_call_duration_seconds_count\{tenant="acme"\} 2$/m);
  t.regex(text, /^toolcell_quota_refusals_total\{tenant="acme",limit="callsPerMinute"\} 1$/m);
  t.regex(text, /^toolcell_auth_failures_total\{reason="unknown_key"\} 2$/m);
  t.regex(text, /^toolcell_sessions_opened_total\{tenant="acme"\} 1$/m);
  t.regex(text, /^toolcell_live_sessions 3$/m);
  t.regex(text, /^toolcell_live_containers 2$/m);
  t.regex(text, /^toolcell_queued_calls 0$/m);
  t.regex(text, /^toolcell_process_resident_memory_bytes \d+/m);
  sessions = 5;
  t.regex(await (await fetch(`${server.url}/metrics`)).text(), /^toolcell_live_sessions 5$/m, 'read again at each scrape');
});

test('the metrics listener answers /healthz, /readyz with detail, and 404 elsewhere', async (t) => {
  const server = await serveMetrics({
    metrics: new HostingMetrics({ processMetrics: false }),
    port: 0,
    ready: async () => ({ ready: false, checks: { engine: { ok: false, detail: 'no engine here' } } }),
  });
  t.teardown(() => server.close());
  t.deepEqual(await (await fetch(`${server.url}/healthz`)).json(), { status: 'ok' });
  const readyz = await fetch(`${server.url}/readyz`);
  t.is(readyz.status, 503);
  t.deepEqual(await readyz.json(), { ready: false, checks: { engine: { ok: false, detail: 'no engine here' } } });
  t.is((await fetch(`${server.url}/mcp`)).status, 404);
  t.is((await fetch(`${server.url}/metrics`, { method: 'POST' })).status, 405);
});

test('two HostingMetrics in one process keep their numbers apart', async (t) => {
  const a = new HostingMetrics({ processMetrics: false });
  const b = new HostingMetrics({ processMetrics: false });
  countEvents(a);
  t.regex((await a.text()).body, /toolcell_tool_calls_total\{tenant="acme"/);
  t.notRegex((await b.text()).body, /tenant="acme"/);
});

async function mount(t: { teardown(fn: () => void): void }, handler: RequestHandler): Promise<string> {
  const server = createServer((req, res) => void handler(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('as plain handlers on another server: /readyz without detail says only ready or not, and concurrent requests share one check', async (t) => {
  let checks = 0;
  const readyz = createReadyzHandler({
    check: async () => {
      checks++;
      return { ready: true, checks: { engine: { ok: true, detail: 'Docker 20.10' } } };
    },
    cacheMs: 60_000,
  });
  const url = await mount(t, readyz);
  const answers = await Promise.all(Array.from({ length: 5 }, () => fetch(url).then((r) => r.json())));
  for (const answer of answers) t.deepEqual(answer, { ready: true });
  t.is(checks, 1);
  const health = await mount(t, healthzHandler);
  t.is((await fetch(health)).status, 200);
});

test('a readiness check that throws is not ready', async (t) => {
  const url = await mount(t, createReadyzHandler({ check: () => Promise.reject(new Error('boom')), detail: true }));
  const response = await fetch(url);
  t.is(response.status, 503);
  t.deepEqual(await response.json(), { ready: false, checks: { check: { ok: false, detail: 'boom' } } });
});

test('dockerReadiness: an engine that does not answer is not ready, with the reason', async (t) => {
  const result = await dockerReadiness({ engine: { socketPath: '/nonexistent/docker.sock' } })();
  t.false(result.ready);
  t.false(result.checks['engine']!.ok);
  t.truthy(result.checks['engine']!.detail);
});

test("dockerReadiness against this machine's engine: the engine check says what the probe says, the image check names the tag", async (t) => {
  const probe = await probeDocker();
  const result = await dockerReadiness({ image: 'toolcell-no-such-image:0' })();
  t.is(result.checks['engine']!.ok, probe.available);
  t.false(result.ready, 'an absent image is never ready');
  t.regex(result.checks['image']!.detail ?? '', /toolcell-no-such-image:0/);
});

test('parseListenAddress reads PORT, HOST:PORT and [IPv6]:PORT', (t) => {
  t.deepEqual(parseListenAddress('9464'), { host: '127.0.0.1', port: 9464 });
  t.deepEqual(parseListenAddress('0.0.0.0:9100'), { host: '0.0.0.0', port: 9100 });
  t.deepEqual(parseListenAddress('[::1]:9100'), { host: '::1', port: 9100 });
  for (const bad of ['', 'x', '99999', 'host:', ':1:2']) t.throws(() => parseListenAddress(bad), { instanceOf: RangeError }, bad);
});

test('a cluster node: every series carries its node label, and a bad node name is refused naming the option', async (t) => {
  const metrics = new HostingMetrics({ node: 'node-2', liveSessions: () => 1, processMetrics: true });
  countEvents(metrics);
  const text = await metrics.registry.metrics();
  const series = text.split('\n').filter((line) => line.startsWith('toolcell_'));
  t.true(series.length > 10);
  t.deepEqual(
    series.filter((line) => !line.includes('node="node-2"')),
    [],
  );
  t.regex(text, /^toolcell_tool_calls_total\{tenant="acme",outcome="success",node="node-2"\} 2$/m);
  t.throws(() => new HostingMetrics({ node: 'a.b' }), { message: /node/ });
});

test('allReady: ready only when every check is, with every check named; a check that throws is not ready', async (t) => {
  const up: ReadinessCheck = async () => ({ ready: true, checks: { engine: { ok: true } } });
  const cut: ReadinessCheck = async () => ({ ready: false, checks: { cluster: { ok: false, detail: 'etcd out of reach' } } });
  const broken: ReadinessCheck = async () => {
    throw new Error('boom');
  };
  t.deepEqual(await allReady(up)(), { ready: true, checks: { engine: { ok: true } } });
  t.deepEqual(await allReady(up, cut)(), { ready: false, checks: { engine: { ok: true }, cluster: { ok: false, detail: 'etcd out of reach' } } });
  const failed = await allReady(up, broken)();
  t.false(failed.ready);
  t.regex(JSON.stringify(failed.checks), /boom/);
});
