import anyTest from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { sandboxImageTag } from '../../src/backends/docker/image.js';
import { LABELS } from '../../src/backends/docker/labels.js';
import { tenantSlug } from '../../src/hosting/tenants/disk/tenant-slug.js';
import { cliPath, runCli } from '../helpers/cli.js';
import { containersWithLabel, eventually, requireDocker, runningProcesses } from '../helpers/docker.js';
import { addTenant, call, connectAs, hostingFolder, startHosting } from '../helpers/hosting.js';
import { releaseLeftDisks } from '../helpers/hosting-cli.js';

/** A hosting server's start and end: leftovers removed, a drain that lets calls finish, the CLI's SIGTERM. */
const test = (await requireDocker(anyTest, 'hosting/lifecycle')).serial;

/** The pid of a process that has exited (and so owns nothing any more). */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await once(child, 'exit');
  return child.pid!;
}

test('containers a crashed server left behind are removed at start', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'alpha');
  const docker = createEngineClient();
  const marker = `leftover-${process.pid}-${Date.now()}`;
  const container = await docker.createContainer({
    Image: sandboxImageTag(),
    Cmd: ['true'],
    Labels: {
      [LABELS.sandbox]: '1',
      [LABELS.ownerPid]: String(await deadPid()),
      [LABELS.ownerStart]: '',
      [LABELS.ownerHost]: hostname(),
      [LABELS.session]: marker,
    },
  });
  t.teardown(() => container.remove({ force: true }).catch(() => {}));
  t.is((await containersWithLabel(LABELS.session, marker)).length, 1);
  // And the event file of a tenant proxy the crashed server ran.
  const staleEvents = join(dir, 'data', 'egress', 'alpha-stale.jsonl');
  await mkdir(dirname(staleEvents), { recursive: true });
  await writeFile(staleEvents, '{"action":"allowed"}\n');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  t.is((await containersWithLabel(LABELS.session, marker)).length, 0);
  t.false(existsSync(staleEvents));
});

test('closing with a drain lets a running call finish, then removes every container', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'alpha');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const alpha = await connectAs(hosting.server.url, key);
  t.teardown(() => alpha.client.close());
  const running = call(alpha.client, 'run_shell_command', { command: 'sleep 2; echo drained-ok' });
  t.true(await eventually(async () => hosting.server.listSessions().some((session) => session.calls === 1), 30_000, 20));
  const workspace = join(hosting.dataDir, 'tenants', 'alpha', 'workspace');
  await hosting.server.close({ drainMs: 60_000 });
  t.true((await running).text.includes('drained-ok'));
  t.deepEqual(await containersWithLabel(LABELS.workspace, workspace), []);
});

test('closing without a drain cancels running calls and removes every container', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'alpha');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());
  const alpha = await connectAs(hosting.server.url, key);
  t.teardown(() => alpha.client.close());
  const outcome = call(alpha.client, 'run_shell_command', { command: 'sleep 120; echo never' }).then(
    (result) => result.text,
    (error: unknown) => String(error),
  );
  t.true(await eventually(async () => hosting.server.listSessions().some((session) => session.calls === 1), 30_000, 20));
  const workspace = join(hosting.dataDir, 'tenants', 'alpha', 'workspace');
  // The session's container starts in the background of its first call: wait until it exists.
  t.true(await eventually(async () => (await containersWithLabel(LABELS.workspace, workspace)).length === 1));
  await hosting.server.close({ drainMs: 0 });
  t.deepEqual(await containersWithLabel(LABELS.workspace, workspace), []);
  await alpha.client.close();
  t.false((await outcome).includes('Output: never'));
});

test('toolcell serve --tenants with --audit, --metrics, --admin and --admin-key-file: a capped workspace, health, metrics, admin and audit lines; SIGTERM drains and removes its containers', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'alpha');
  const dataDir = join(dir, 'data');
  // Should the test fail, the killed server's mount is released before the folder is removed.
  releaseLeftDisks(t, dataDir, ['alpha']);
  const auditFile = join(dir, 'audit.jsonl');
  const adminKeyFile = join(dir, 'admin.key');
  await writeFile(adminKeyFile, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [
      cliPath,
      'serve',
      '--http',
      '127.0.0.1:0',
      '--tenants',
      file,
      '--data-dir',
      dataDir,
      '--approval',
      'yolo',
      '--drain-seconds',
      '60',
      '--audit',
      auditFile,
      '--metrics',
      '127.0.0.1:0',
      '--admin',
      '127.0.0.1:0',
      // The suite's engine serves every test at once (helpers/engine-priority.ts).
      '--engine-nice',
      '0',
      '--admin-key-file',
      adminKeyFile,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  t.teardown(() => void child.kill('SIGKILL'));
  let stderr = '';
  const [url, metricsUrl, adminUrl] = await new Promise<[string, string, string]>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const mcp = /at (http:\/\/\S+\/mcp)/.exec(stderr);
      const metrics = /readyz for operators at (http:\/\/\S+)/.exec(stderr);
      const admin = /admin API \(\/admin\/\) for operators at (http:\/\/\S+)/.exec(stderr);
      if (mcp && metrics && admin) resolve([mcp[1]!, metrics[1]!, admin[1]!]);
    });
    child.once('exit', () => reject(new Error(`serve exited: ${stderr}`)));
  });
  const base = url.replace(/\/mcp$/, '');
  t.is((await fetch(`${base}/healthz`)).status, 200);
  const alpha = await connectAs(url, key);
  t.teardown(() => alpha.client.close());
  t.true((await call(alpha.client, 'run_shell_command', { command: 'echo first' })).text.includes('first'));
  // Run as root, the tenant's workspace is a filesystem of its own (its disk cap), not a folder of the host's.
  const workspace = join(dataDir, 'workspaces', tenantSlug('alpha'));
  t.regex((await call(alpha.client, 'run_shell_command', { command: 'df -P /workspace | tail -1' })).text, /\/workspace/);
  t.not(statSync(workspace).dev, statSync(dataDir).dev, 'the workspace is a mount of its own');

  // 40 MB in the container's /tmp (a tmpfs, charged to its memory): the figure must show it.
  t.regex((await call(alpha.client, 'run_shell_command', { command: 'head -c 40000000 /dev/zero > /tmp/fill && echo filled' })).text, /filled/);
  const sessions = await runCli(['hosting', 'sessions', '--server', adminUrl, '--admin-key-file', adminKeyFile, '--json']);
  t.is(sessions.code, 0, sessions.stderr);
  t.like(JSON.parse(sessions.stdout), [{ id: alpha.sessionId, tenant: 'alpha' }]);
  // Its container runs (it ran the commands above): a figure, not `-`, and one that counts what it holds.
  const [listed] = JSON.parse(sessions.stdout) as Array<{ memoryBytes?: unknown }>;
  t.true(typeof listed!.memoryBytes === 'number' && listed!.memoryBytes >= 40_000_000, sessions.stdout);
  const table = await runCli(['hosting', 'sessions', '--server', adminUrl, '--admin-key-file', adminKeyFile]);
  t.regex(table.stdout.split('\n')[1] ?? '', new RegExp(`^${alpha.sessionId}\\s+alpha\\s.*\\s\\d+\\.\\d (KiB|MiB)$`), table.stdout);
  const scraped = await (await fetch(`${metricsUrl}/metrics`)).text();
  t.regex(scraped, /tenant="alpha"/);

  const running = call(alpha.client, 'run_shell_command', { command: 'sleep 2; echo finished-in-drain' }).catch((error: unknown) => ({ text: String(error) }));
  // The command is running once its container shows a sleep process; then stop the server.
  t.true(
    await eventually(async () => {
      const [id] = await containersWithLabel(LABELS.workspace, workspace);
      if (!id) return false;
      return (await runningProcesses(id)).some((row) => row.args.startsWith('sleep 2'));
    }),
  );
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  t.true((await running).text.includes('finished-in-drain'));
  const [code] = (await exited) as [number | null];
  t.is(code, 0, stderr);
  t.deepEqual(await containersWithLabel(LABELS.workspace, workspace), []);
  const lines = readFileSync(auditFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.true(lines.some((line) => line['event'] === 'session_open' && line['tenant'] === 'alpha'));
  t.true(lines.some((line) => line['event'] === 'tool_call' && line['tenant'] === 'alpha' && JSON.stringify(line['args']).includes('echo first')));
  t.true(lines.some((line) => line['event'] === 'admin'));
  t.false(readFileSync(auditFile, 'utf8').includes(key), 'the key is never written');
});
