/**
 * Each tenant's share of the server's shared threads, on a real hosting
 * server (real Docker, HTTP, the MCP SDK client): a tenant whose file tool
 * calls have used up its `serverCpu` waits for its share while another
 * tenant's calls run at once; raising its limit in the tenants file lets the
 * waiting call go; the metrics count both. Nothing here asserts a duration:
 * who is answered while whom waits is the property.
 */
import anyTest from 'ava';
import { join } from 'node:path';
import { HostingMetrics } from '../../src/hosting/metrics/hosting-metrics.js';
import { runCli } from '../helpers/cli.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, post, startHosting } from '../helpers/hosting.js';
import { testToolModuleUrl } from '../helpers/pool.js';

const test = (await requireDocker(anyTest, 'hosting/server-cpu-share')).serial;

test("a tenant past its serverCpu waits for its share; another tenant's file tools run meanwhile; a raised limit applies to the waiting call", async (t) => {
  t.timeout(180_000);
  const dir = await hostingFolder(t, 'toolcell-server-cpu-');
  const file = join(dir, 'tenants.json');
  // A hundredth of a CPU: 40 ms of burst, then 10 ms of the threads' CPU a second.
  const greedyKey = await addTenant(file, 'greedy', ['--limit', 'serverCpu=0.01']);
  const quietKey = await addTenant(file, 'quiet');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data'), pool: { threads: 2, toolModules: [testToolModuleUrl] } });
  t.teardown(() => hosting.close());
  const metrics = new HostingMetrics({
    processMetrics: false,
    serverCpu: () => hosting.server.serverCpuUsage(),
    serverCpuWaiting: () => hosting.server.serverCpuWaiting,
  });
  const greedy = await connectTenant(t, hosting.server.url, greedyKey);
  const quiet = await connectTenant(t, hosting.server.url, quietKey);

  // Its burst left: runs at once, and costs it 200 ms of a worker's CPU, 160 ms past its burst (16 s of its rate).
  t.is((await call(greedy.client, 'burn', { cpuMs: 200 })).text, 'burnt');
  let greedyAnswered = false;
  const waiting = call(greedy.client, 'burn', { cpuMs: 20 }).finally(() => (greedyAnswered = true));
  t.true(await eventually(async () => hosting.server.serverCpuWaiting === 1, 30_000, 20), "greedy's second call waits for its share");
  t.regex((await metrics.text()).body, /^toolcell_server_cpu_waiting_calls 1$/m);

  // Quiet has its own share: its calls, on the same two workers, do not wait behind greedy's debt.
  for (let i = 0; i < 3; i++) t.is((await call(quiet.client, 'burn', { cpuMs: 50 })).text, 'burnt');
  t.is((await call(quiet.client, 'list_directory', { dir_path: '.' })).errorType, undefined);
  t.false(greedyAnswered, "greedy's call still waits when quiet's four are answered");

  // The operator raises greedy's share: the waiting call goes (looked at again within a second), and is not refused.
  const set = await runCli(['tenant', 'set', 'greedy', '--tenants', file, '--limit', 'serverCpu=4']);
  t.is(set.code, 0, set.stderr);
  t.is((await waiting).text, 'burnt');
  t.is(hosting.server.serverCpuWaiting, 0);

  const usage = Object.fromEntries(hosting.server.serverCpuUsage().map((entry) => [entry.tenant, entry]));
  t.true(usage['greedy']!.cpuSeconds >= 0.22, `greedy charged ${usage['greedy']!.cpuSeconds} s`);
  t.true(usage['greedy']!.waitedSeconds > 0);
  t.true(usage['quiet']!.cpuSeconds >= 0.15, `quiet charged ${usage['quiet']!.cpuSeconds} s`);
  t.is(usage['quiet']!.waitedSeconds, 0);
  const text = (await metrics.text()).body;
  t.regex(text, /^toolcell_tenant_server_cpu_seconds_total\{tenant="greedy"\} 0\.\d+$/m);
  t.regex(text, /^toolcell_tenant_server_cpu_wait_seconds_total\{tenant="greedy"\} \d+(\.\d+)?$/m);
  t.regex(text, /^toolcell_tenant_server_cpu_wait_seconds_total\{tenant="quiet"\} 0$/m);
});

test("parsing a tenant's request bodies is charged to its serverCpu: past its share its next large body waits before it is read; another tenant's calls do not wait", async (t) => {
  t.timeout(180_000);
  const dir = await hostingFolder(t, 'toolcell-server-cpu-');
  const file = join(dir, 'tenants.json');
  const greedyKey = await addTenant(file, 'greedy', ['--limit', 'serverCpu=0.01']);
  const quietKey = await addTenant(file, 'quiet');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const greedy = await connectTenant(t, hosting.server.url, greedyKey);
  const quiet = await connectTenant(t, hosting.server.url, quietKey);
  const headers = { Authorization: `Bearer ${greedyKey}`, 'Mcp-Session-Id': greedy.sessionId };
  const usageOf = (tenant: string) => hosting.server.serverCpuUsage().find((entry) => entry.tenant === tenant) ?? { cpuSeconds: 0, waitedSeconds: 0 };

  // Bodies of 3 MiB, one after another, each a few ms of the event loop's time: its 40 ms burst is spent, then one waits.
  let answered = 0;
  let stop = false;
  const sending = (async () => {
    for (let i = 0; i < 300 && !stop; i++) {
      const body = {
        jsonrpc: '2.0',
        id: `big-${i}`,
        method: 'tools/call',
        params: { name: 'list_directory', arguments: { dir_path: '.', padding: 'x'.repeat(3 * 1024 * 1024) } },
      };
      await (await post(hosting.server.url, body, headers)).text();
      answered++;
    }
  })();
  t.teardown(() => void (stop = true));
  t.true(await eventually(async () => hosting.server.serverCpuWaiting === 1, 120_000, 5), "one of greedy's bodies waits for its share");
  // Quiet's own share is untouched: its call is answered without waiting.
  t.is((await call(quiet.client, 'list_directory', { dir_path: '.' })).errorType, undefined);
  stop = true;
  await sending;
  t.true(usageOf('greedy').cpuSeconds > 0.04, `greedy charged ${usageOf('greedy').cpuSeconds} s`);
  t.true(usageOf('greedy').waitedSeconds > 0);
  t.true(answered > 0);
  t.is(usageOf('quiet').waitedSeconds, 0);
});

test('serverCpu is checked where limits are: a value out of bounds is refused naming the limit', async (t) => {
  const dir = await hostingFolder(t, 'toolcell-server-cpu-');
  const file = join(dir, 'tenants.json');
  for (const value of ['0', '-1', '2000', 'lots']) {
    const result = await runCli(['tenant', 'add', `t${value.replace(/\W/g, '')}`, '--tenants', file, '--limit', `serverCpu=${value}`]);
    t.not(result.code, 0, value);
    t.regex(result.stderr, /serverCpu/, value);
  }
});
