/**
 * bench/hosting: a tenants server under load, with the real Docker engine,
 * real HTTP and the MCP SDK's own client.
 *
 * Prints: sessions opened per second (100 at once, across 50 tenants) and
 * their failures; the first call's latency in a new session; sandboxed calls
 * per second in total with 1, 10 and 50 tenants calling at once; the server's
 * RSS and the engine's memory figure per idle session; and the noisy-neighbour
 * ratio (tenant B's `echo` p99 while tenant A attacks, over B's p99 on the
 * same server idle, in the same run). Nothing here is asserted: figures only.
 *
 * Each noisy-neighbour figure also says where the time went: B's p99 as the
 * server timed it (its tool_call event), the server's event-loop delay, and
 * the CPU seconds per second used by the server, the attacker clients, A's
 * sandbox, the Docker engine and the rest of the machine. The attackers are
 * child processes in sessions of their own at nice 19 (BENCH_ATTACKER_NICE):
 * on this machine their clients share the server's cores, where a real
 * attacker's run elsewhere.
 *
 *   npm run bench:hosting            (BENCH_QUICK=1 for a short run; BENCH_ONLY=noisy for the noisy-neighbour figures alone;
 *                                     with BENCH_NOISY_ALL=1 only the all-at-once figure, e.g. under node --cpu-prof)
 *
 * Knobs for comparing runs (each off unless set): BENCH_SERVER_CPU (every tenant's serverCpu, e.g. 1024 for no
 * share), BENCH_TOTAL_CPUS (A's totalCpus, e.g. 1024 for no cap), BENCH_ATTACKER_CPM (A's callsPerMinute; default
 * the product's), BENCH_ATTACKER_SPM (A's sessionsPerMinute; default the product's), BENCH_AUTOGROUP_NICE (this process's
 * session at that nice, where the kernel groups by session), BENCH_TOOL_THREAD_NICE (the file-tool threads'
 * nice), BENCH_ATTACKER_NICE (the attackers' own sessions' nice, default 19), BENCH_NOISY_SKIP (a regex: attacks
 * left out of the all-at-once figure), BENCH_NOISY_SAMPLES (B's calls a noisy-neighbour figure; default 400), BENCH_SANDBOX_CPUS (the sandboxes' CPUs, as `serve --sandbox-cpus`; default
 * this process's last CPU, the server and the attackers' clients keeping the rest; `none` for no split), BENCH_MAIN_NICE
 * (the event loop's thread's nice; default the server's, -5; 0 for none), BENCH_ENGINE_NICE (the local Docker
 * engine's nice, as `serve --engine-nice`; default the server's, 10; 0 for as it is; put back at the end).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createEngineClient } from '../src/backends/docker/engine.js';
import { LABELS } from '../src/backends/docker/labels.js';
import { ApiKeyAuthenticator, generateApiKey } from '../src/hosting/auth/api-key.js';
import { TenantDisks } from '../src/hosting/tenants/disk/tenant-disks.js';
import { tenantSlug } from '../src/hosting/tenants/disk/tenant-slug.js';
import { HostingServer, type HostingServerOptions } from '../src/hosting/server/hosting-server.js';
import { createHostingHttpServer } from '../src/hosting/http/hosting-http-server.js';
import { HOSTING_TOOL_THREAD_NICE } from '../src/hosting/create-hosting-server.js';
import { DEFAULT_TENANT_LIMITS, type LimitsInput } from '../src/hosting/admission/limits.js';
import { TenantStore } from '../src/hosting/tenants/tenant-store.js';
import { emptyTenantsFile, writeTenantsFile } from '../src/hosting/tenants/tenants-file.js';
import { createRuntime } from '../src/runtime/runtime.js';
import { allowedCpus, keepServerOffCpus } from '../src/cli/server-cpus.js';
import { raiseEventLoopPriority } from '../src/cli/server-priority.js';
import { HOSTING_ENGINE_NICE, lowerLocalEngine } from '../src/cli/engine-priority.js';
import { rememberEnginePriority } from '../test/helpers/engine-priority.js';
import { fetchWithOwnSignal } from '../src/mcp/fetch-own-signal.js';
import { formatCpuList } from '../src/contracts/cpu-list.js';
import { cpuPhase, describeShares, type CpuShares } from './hosting-cpu.js';
import { fmt, percentile, sortNumbers } from './stats.js';

const QUICK = process.env['BENCH_QUICK'] === '1';
const TENANTS = 50;
const OPEN_AT_ONCE = 100;
const THROUGHPUT_SECONDS = QUICK ? 4 : 10;
/** B's calls a noisy-neighbour figure (BENCH_NOISY_SAMPLES): the p99 of 400 is their fourth slowest; of 100 it was the second, so one stall decided it. */
const NOISY_SAMPLES = Number(process.env['BENCH_NOISY_SAMPLES'] ?? (QUICK ? 40 : 400));
const MiB = 1024 * 1024;
/** The attackers' client processes run at this niceness (BENCH_ATTACKER_NICE; 0 for the same priority as the server). */
const ATTACKER_NICE = Number(process.env['BENCH_ATTACKER_NICE'] ?? 19);

/** One noisy-neighbour figure: B's latencies, the server's own view of B's calls, its event loop, and who used the CPU. */
interface Phase {
  p50: number;
  p99: number;
  /** B's slowest call: next to the p99, it shows whether one stall or a tail decides the figure. */
  max: number;
  failed: number;
  /** p99 of B's calls as the server timed them (its `tool_call` event: from the call's arrival in the scheduler to its result). */
  serverP99: number;
  loopP99: number;
  loopMax: number;
  shares: CpuShares;
}

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

async function connect(url: string, key: string): Promise<Session> {
  const client = new Client({ name: 'bench-hosting', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: fetchWithOwnSignal(),
  });
  await client.connect(transport);
  return { client, transport };
}

async function closeSession(session: Session): Promise<void> {
  await session.transport.terminateSession().catch(() => {});
  await session.client.close().catch(() => {});
}

/** One shell call; throws on a protocol failure, returns false on a tool error. */
async function shell(session: Session, command: string, signal?: AbortSignal): Promise<boolean> {
  const result = (await session.client.callTool({ name: 'run_shell_command', arguments: { command } }, undefined, {
    timeout: 300_000,
    ...(signal ? { signal } : {}),
  })) as CallToolResult;
  return result.isError !== true;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/** The engine's memory figure (usage minus page cache) of every container of this process's backend. */
async function containerMemory(): Promise<{ count: number; bytes: number }> {
  const docker = createEngineClient();
  const containers = await docker.listContainers({ filters: { label: [`${LABELS.sandbox}=1`, `${LABELS.ownerPid}=${process.pid}`] } });
  let bytes = 0;
  let count = 0;
  for (const info of containers) {
    let stats: { memory_stats?: { usage?: number; stats?: { inactive_file?: number } } };
    try {
      stats = (await docker.getContainer(info.Id).stats({ stream: false })) as typeof stats;
    } catch {
      continue; // Removed since the listing (a session that closed): not an idle session's container.
    }
    bytes += (stats.memory_stats?.usage ?? 0) - (stats.memory_stats?.stats?.inactive_file ?? 0);
    count++;
  }
  return { count, bytes };
}

/** An error with its causes (`fetch failed` says nothing without them: the socket error is in `cause`). */
function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    const { message, code } = current as { message?: unknown; code?: unknown };
    parts.push([typeof code === 'string' ? code : '', typeof message === 'string' ? message : String(current)].filter(Boolean).join(' '));
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(' <- ');
}

function line(label: string, value: string): void {
  console.log(`  ${label.padEnd(52)} ${value}`);
}

const root = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-bench-hosting-')));
const dataDir = join(root, 'data');
const tenantsFile = join(root, 'tenants.json');
const keys = new Map<string, string>();
const file = emptyTenantsFile();
// BENCH_SERVER_CPU: every tenant's share of the server's shared threads (serverCpu; default the product's), e.g. 1024 for none.
const serverCpu = process.env['BENCH_SERVER_CPU'] !== undefined ? { serverCpu: Number(process.env['BENCH_SERVER_CPU']) } : {};
const limits: LimitsInput = {
  sessions: 4,
  concurrentCalls: 4,
  callsPerMinute: 1_000_000,
  memory: 256 * MiB,
  pids: 128,
  commandTimeoutSeconds: 30,
  ...serverCpu,
};
file.defaults = { limits };
for (let i = 0; i < TENANTS; i++) {
  const name = `t${String(i).padStart(2, '0')}`;
  const key = generateApiKey();
  keys.set(name, key.key);
  file.tenants[name] = { keys: [{ id: key.id, hash: key.hash, createdAt: new Date().toISOString() }] };
}
// The attacker: a disk cap to fill, room for every attack at once, and a policy its commands are judged by.
const attackerPolicy = join(root, 'attacker-policy.toml');
await writeFile(
  attackerPolicy,
  ['rm', 'curl', 'git push']
    .map((prefix) => `[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "${prefix}"\ndecision = "deny"\npriority = 100\n`)
    .join('\n') + '\n[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = ["echo", "ls", "cat"]\ndecision = "allow"\npriority = 50\n',
);
// Its call rate is the product's default (an ordinary key), not the throughput phase's million (BENCH_ATTACKER_CPM overrides).
file.tenants['t00']!.limits = {
  diskBytes: 256 * MiB,
  sessions: 16,
  concurrentCalls: 8,
  callsPerMinute: Number(process.env['BENCH_ATTACKER_CPM'] ?? DEFAULT_TENANT_LIMITS.callsPerMinute),
  // BENCH_TOTAL_CPUS: A's sandboxes' CPUs together (totalCpus; default the product's, its cpus), e.g. 1024 for no cap.
  ...(process.env['BENCH_TOTAL_CPUS'] !== undefined ? { totalCpus: Number(process.env['BENCH_TOTAL_CPUS']) } : {}),
  ...(process.env['BENCH_ATTACKER_SPM'] !== undefined ? { sessionsPerMinute: Number(process.env['BENCH_ATTACKER_SPM']) } : {}),
};
file.tenants['t00']!.policies = [attackerPolicy];
await writeTenantsFile(tenantsFile, file);

// BENCH_AUTOGROUP_NICE: this process's session at that nice (the kernel's autogroup, where it is on), e.g. -10.
if (process.env['BENCH_AUTOGROUP_NICE'] !== undefined) await writeFile('/proc/self/autogroup', process.env['BENCH_AUTOGROUP_NICE']);
const store = await TenantStore.open({ file: tenantsFile });
/** B's calls as the server timed them (filled while B is measured). */
const victimServerMs: number[] = [];
// BENCH_TOOL_THREAD_NICE: the file-tool threads' nice (WorkerPoolOptions.threadNice); default a hosting server's (createHostingServer's).
const toolThreadNice = Number(process.env['BENCH_TOOL_THREAD_NICE'] ?? HOSTING_TOOL_THREAD_NICE);
// The split `serve --sandbox-cpus` makes, done the same way (keepServerOffCpus), before the runtime starts any thread.
const sandboxCpusKnob = process.env['BENCH_SANDBOX_CPUS'] ?? formatCpuList((await allowedCpus()).slice(-1));
const split = sandboxCpusKnob === 'none' ? undefined : await keepServerOffCpus(sandboxCpusKnob);
if (split !== undefined && 'problem' in split) throw new Error(`BENCH_SANDBOX_CPUS: ${split.problem}`);
// The event loop's priority `serve --tenants` gives it (raiseEventLoopPriority); BENCH_MAIN_NICE sets another (0: none).
const mainNice = process.env['BENCH_MAIN_NICE'];
const priority = mainNice === undefined ? raiseEventLoopPriority() : (setPriority(Number(mainNice)), { nice: Number(mainNice) });
if ('problem' in priority) throw new Error(priority.problem);
// The engine's priority `serve --tenants` gives it (lowerLocalEngine, --engine-nice); BENCH_ENGINE_NICE sets another
// (0: as it is). Put back when the bench ends.
const engineNice = Number(process.env['BENCH_ENGINE_NICE'] ?? HOSTING_ENGINE_NICE);
const restoreEngine = await rememberEnginePriority();
const lowered = engineNice > 0 ? await lowerLocalEngine(engineNice) : undefined;
if (lowered !== undefined && 'problem' in lowered) throw new Error(`BENCH_ENGINE_NICE: ${lowered.problem}`);
const runtime = await createRuntime({
  workspace: root,
  approvalMode: 'yolo',
  sandbox: 'docker',
  pool: { threadNice: toolThreadNice },
  ...(split ? { sandboxCpus: split.sandbox } : {}),
  onWarning: () => {},
});
const disks = await TenantDisks.open({ dataDir });
const server = await HostingServer.start({
  store,
  runtime,
  authenticators: [new ApiKeyAuthenticator(store)],
  dataDir,
  prepareWorkspace: (tenant, tenantLimits, owner) => disks.prepare(tenant, { diskBytes: tenantLimits.diskBytes }, owner),
  port: 0,
  // The hardened HTTP front `toolcell serve --tenants` runs (its timeouts and keep-alive), not a bare node:http server.
  createListener: (handler) => createHostingHttpServer({ handler }) as ReturnType<NonNullable<HostingServerOptions['createListener']>>,
  maxSessions: 128,
  maxConcurrentCalls: 64,
  observer: {
    record: (event) => {
      if (event.event === 'tool_call' && event.tenant === 't01') victimServerMs.push(event.durationMs);
    },
  },
});
const tenantNames = [...keys.keys()];
const keyOf = (name: string): string => keys.get(name)!;

console.log(
  `bench/hosting: ${TENANTS} tenants, Docker sandbox, MCP SDK client over HTTP (load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)}; ${split ? split.summary : 'no CPU split: server and sandboxes on every CPU'}; event loop at nice ${priority.nice})`,
);

try {
  // BENCH_ONLY=noisy: the noisy-neighbour figures alone (a minute instead of five).
  let sessions: Session[] = [];
  const byTenant = new Map<string, Session>();
  if (process.env['BENCH_ONLY'] !== 'noisy') {
    const rssBefore = process.memoryUsage().rss;

    // 1. 100 sessions opened at once (2 per tenant), then each one's first call.
    let failedOpens = 0;
    const openErrors = new Map<string, number>();
    const openStart = performance.now();
    const opened = await Promise.all(
      Array.from({ length: OPEN_AT_ONCE }, (_, i) =>
        connect(server.url, keyOf(tenantNames[i % TENANTS]!)).catch((error: unknown) => {
          failedOpens++;
          const text = describeError(error).slice(0, 200);
          openErrors.set(text, (openErrors.get(text) ?? 0) + 1);
          return undefined;
        }),
      ),
    );
    const openMs = performance.now() - openStart;
    sessions = opened.filter((session): session is Session => session !== undefined);
    let failedFirstCalls = 0;
    const firstCallStart = performance.now();
    const firstCalls = await Promise.all(
      sessions.map((session) =>
        timed(async () => {
          if (!(await shell(session, 'echo first').catch(() => false))) failedFirstCalls++;
        }),
      ),
    );
    const firstCallsWallMs = performance.now() - firstCallStart;
    sortNumbers(firstCalls);
    console.log('\nsessions');
    line(
      `${OPEN_AT_ONCE} sessions opened at once`,
      `${(openMs / 1000).toFixed(2)} s, ${((sessions.length / openMs) * 1000).toFixed(1)} sessions/s, ${failedOpens} failed`,
    );
    for (const [text, count] of openErrors) line(`  ${count} failed with`, text);
    line(
      'first call of each (all at once; starts its container)',
      `p50 ${fmt(percentile(firstCalls, 50))}, p99 ${fmt(percentile(firstCalls, 99))}, ${failedFirstCalls} failed`,
    );
    line('  all 100 first calls done after', `${(firstCallsWallMs / 1000).toFixed(2)} s`);

    // 2. Memory of 100 idle sessions (each has run one call, so its container is up).
    const rssIdle = process.memoryUsage().rss;
    const engine = await containerMemory();
    console.log('\nmemory per idle session');
    line('server RSS growth / session', `${((rssIdle - rssBefore) / sessions.length / MiB).toFixed(2)} MB`);
    line(`containers' memory (engine, ${engine.count} containers) / session`, `${(engine.bytes / Math.max(1, engine.count) / MiB).toFixed(2)} MB`);
    line('in all / session', `${((rssIdle - rssBefore + engine.bytes) / sessions.length / MiB).toFixed(2)} MB (target ≤ 15 MB)`);

    // 3. Sandboxed calls per second with 1, 10 and 50 tenants calling at once (one session each, `true` in a loop).
    console.log(`\nthroughput (${THROUGHPUT_SECONDS} s each, one session per tenant calling \`true\` in a loop)`);
    sessions.forEach((session, i) => {
      const tenant = tenantNames[i % TENANTS]!;
      if (!byTenant.has(tenant)) byTenant.set(tenant, session);
    });
    let oneTenantRate = 0;
    for (const count of [1, 10, 50]) {
      // Tenants whose sessions failed to open above are left out (and said so): their failures are counted there.
      const callers = tenantNames
        .slice(0, count)
        .map((tenant) => byTenant.get(tenant))
        .filter((session): session is Session => session !== undefined);
      const deadline = performance.now() + THROUGHPUT_SECONDS * 1000;
      let calls = 0;
      let failed = 0;
      const latencies: number[] = [];
      await Promise.all(
        callers.map(async (session) => {
          while (performance.now() < deadline) {
            const ms = await timed(async () => {
              if (!(await shell(session, 'true').catch(() => false))) failed++;
            });
            latencies.push(ms);
            calls++;
          }
        }),
      );
      sortNumbers(latencies);
      const rate = calls / THROUGHPUT_SECONDS;
      if (count === 1) oneTenantRate = rate;
      line(
        `${count} tenant${count === 1 ? '' : 's'}${callers.length < count ? ` (${callers.length} with a session)` : ''}`,
        `${rate.toFixed(1)} calls/s (${(rate / oneTenantRate).toFixed(2)}× one tenant), p50 ${fmt(percentile(latencies, 50))}, p99 ${fmt(percentile(latencies, 99))}, ${failed} failed`,
      );
    }
  }

  // 4. Noisy neighbour: B's echo p99 on the idle server, then while A attacks with every slot it has.
  await Promise.all(sessions.filter((session) => session !== byTenant.get('t01')).map(closeSession));
  const victim = byTenant.get('t01') ?? (await connect(server.url, keyOf('t01')));
  for (let i = 0; i < 10; i++) await shell(victim, 'echo warm').catch(() => false);
  const eventLoop = monitorEventLoopDelay({ resolution: 5 });
  eventLoop.enable();
  /** B's calls, then what the server measured of each (its `tool_call` event), the event loop's delays and who used the CPU meanwhile. */
  const measureB = async (attackerPids: readonly number[]): Promise<Phase> => {
    const samples: number[] = [];
    let failed = 0;
    victimServerMs.length = 0;
    eventLoop.reset();
    const cpu = cpuPhase({ attackerPids, sandboxGroup: tenantSlug('t00') });
    for (let i = 0; i < NOISY_SAMPLES; i++)
      samples.push(
        await timed(async () => {
          if (!(await shell(victim, 'echo hello').catch(() => false))) failed++;
        }),
      );
    const shares = cpu.stop();
    sortNumbers(samples);
    const server = sortNumbers([...victimServerMs]);
    return {
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      max: percentile(samples, 100),
      failed,
      serverP99: percentile(server, 99),
      loopP99: eventLoop.percentile(99) / 1e6,
      loopMax: eventLoop.max / 1e6,
      shares,
    };
  };
  const idle = await measureB([]);
  // Each attack alone, then all at once (the figure the target is about): which one costs B what. Every
  // attacker is a child process (bench/hosting-attacker.ts), so that none of its client work is done on
  // the server's event loop, which shares this process, and runs at nice ATTACKER_NICE: its client's CPU
  // is the bench's load on this machine, not the server's (a real attacker's client runs elsewhere).
  // Four are commands in A's sandbox (fork bomb to disk fill); the others (issue 22) are what A sends the server itself.
  const attacks: Array<[string, string, string?]> = [
    // First: it writes its 19 MB image before the disk fill takes the cap.
    ['answers it never reads (25 MB each)', 'unread-answers'],
    ['fork bomb', 'shell', ':(){ :|:& };:'],
    ['CPU spin', 'shell', 'while :; do :; done'],
    ['1 GB output flood', 'shell', 'head -c 1073741824 /dev/zero | tr "\\0" x'],
    ['disk fill, then spin', 'shell', 'dd if=/dev/zero of=fill bs=1M count=1024; while :; do :; done'],
    ['huge commands under a policy (128 KiB judged, 3.9 MB refused)', 'huge-commands'],
    ['catastrophic regexes and globs', 'regexes'],
    ['stalled 4 MiB bodies (100 open)', 'stalled-bodies'],
    ['log flood: bad keys', 'bad-keys'],
    ['pings with its own key', 'pings'],
    // Last: it spends A's sessionsPerMinute, which the others need to open their sessions.
    ['session churn', 'session-churn'],
  ];
  interface Attacker {
    pid: number;
    stop(): Promise<{ requests: number; errors: number }>;
  }
  const startAttacker = async (mode: string, command?: string): Promise<Attacker> => {
    const script = fileURLToPath(new URL('./hosting-attacker.js', import.meta.url));
    const args = [script, mode, server.url, keyOf('t00'), ...(command !== undefined ? [command] : [])];
    const child = spawn(
      ATTACKER_NICE === 0 ? process.execPath : 'nice',
      ATTACKER_NICE === 0 ? args : ['-n', String(ATTACKER_NICE), process.execPath, ...args],
      {
        // Its stdin is how it knows this process is gone (it ends when the pipe closes): no attacker outlives the bench.
        stdio: ['pipe', 'pipe', 'inherit'],
        // A session of its own: where the kernel groups processes by session (autogroup), the attacker's client is then
        // not part of the server's group (a real one runs on another machine), and its group gets the same niceness.
        detached: true,
      },
    );
    await writeFile(`/proc/${child.pid}/autogroup`, String(ATTACKER_NICE)).catch(() => undefined);
    const lines = createInterface({ input: child.stdout! });
    const said: string[] = [];
    const waiters: Array<() => void> = [];
    lines.on('line', (text) => {
      said.push(text);
      waiters.splice(0).forEach((wake) => wake());
    });
    const next = async (matches: (text: string) => boolean, ms: number): Promise<string | undefined> => {
      const deadline = performance.now() + ms;
      for (;;) {
        const found = said.find(matches);
        if (found !== undefined || child.exitCode !== null || performance.now() > deadline) return found;
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 500);
        });
      }
    };
    // Under way before B is measured: an attacker still waiting for a session attacks nobody.
    if ((await next((text) => text === 'ready', 120_000)) === undefined)
      console.error(`bench/hosting: the ${mode} attacker did not get under way within 120 s`);
    return {
      pid: child.pid!,
      async stop() {
        // An attacker that ended early measured nothing for the rest of the run: say so.
        if (child.exitCode !== null || child.signalCode !== null) {
          console.error(`bench/hosting: the ${mode} attacker ended early (${child.exitCode ?? child.signalCode})`);
          return { requests: 0, errors: 0 };
        }
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const summary = await next((text) => text.startsWith('{'), 10_000);
        await exited;
        return summary === undefined ? { requests: 0, errors: 0 } : (JSON.parse(summary) as { requests: number; errors: number });
      },
    };
  };
  const underAttack = async (chosen: typeof attacks): Promise<Phase & { requests: number; errors: number }> => {
    const running: Attacker[] = [];
    for (const [, mode, command] of chosen) running.push(await startAttacker(mode, command));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const phase = await measureB(running.map((attacker) => attacker.pid));
    const counts = await Promise.all(running.map((attacker) => attacker.stop()));
    return { ...phase, requests: counts.reduce((sum, count) => sum + count.requests, 0), errors: counts.reduce((sum, count) => sum + count.errors, 0) };
  };
  const alone: Array<[string, Phase & { requests: number; errors: number }]> = [];
  // BENCH_NOISY_ALL=1: only the all-at-once figure (for profiling it: node --cpu-prof).
  if (process.env['BENCH_NOISY_ALL'] !== '1') for (const attack of attacks) alone.push([attack[0], await underAttack([attack])]);
  // BENCH_NOISY_SKIP=REGEX: the all-at-once figure without the attacks whose names match (which of them costs B what).
  const skip = process.env['BENCH_NOISY_SKIP'] !== undefined ? new RegExp(process.env['BENCH_NOISY_SKIP']) : undefined;
  const busy = await underAttack(skip ? attacks.filter(([name]) => !skip.test(name)) : attacks);
  // Again at the end: on a shared machine the baseline drifts, and a ratio is only as good as it.
  const idleAfter = await measureB([]);
  eventLoop.disable();
  const figures = (run: Phase): string =>
    `p50 ${fmt(run.p50)}, p99 ${fmt(run.p99)} (${(run.p99 / idle.p99).toFixed(2)}×), max ${fmt(run.max)}, ${run.failed} failed; in the server p99 ${fmt(run.serverP99)}; event loop delay p99 ${fmt(run.loopP99)}, max ${fmt(run.loopMax)}`;
  const load = (run: Phase & { requests?: number; errors?: number }): string =>
    `${run.requests !== undefined ? `${run.requests} attacker requests (${run.errors} refused or failed); ` : ''}CPU s/s: ${describeShares(run.shares)}`;
  console.log(
    `\nnoisy neighbour (B runs \`echo hello\`, ${NOISY_SAMPLES} calls a figure; A, under a policy, attacks with every attack below at once: in its sandbox a fork bomb, a CPU spin, a 1 GB output flood and a fill of its 256 MB disk cap; at the server huge commands, catastrophic regexes, stalled bodies, bad keys, pings, answers it never reads and session churn; A's clients at nice ${ATTACKER_NICE}; file-tool threads at nice ${toolThreadNice}; the engine ${engineNice > 0 ? `at nice ${engineNice}` : 'as it was'})`,
  );
  line('B alone', figures(idle));
  line('', load(idle));
  for (const [name, run] of alone) {
    line(`B while A runs only its ${name}`, figures(run));
    line('', load(run));
  }
  line('B while A does all of these at once', figures(busy));
  line('', load(busy));
  line('B alone again, after the attacks', figures(idleAfter));
  line('', load(idleAfter));
  line('ratio of p99s', `${(busy.p99 / idle.p99).toFixed(2)} (target ≤ 3; ${(busy.p99 / idleAfter.p99).toFixed(2)} over the second B alone)`);
  await closeSession(victim);
} finally {
  await server.close();
  store.close();
  await runtime.close();
  await disks.releaseAll();
  await rm(root, { recursive: true, force: true });
  await restoreEngine();
}
