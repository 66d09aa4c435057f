/**
 * `toolcell serve --tenants … --sandbox-cpus LIST`, the real server as a
 * child process with the real engine and the MCP SDK client: every thread
 * of the server, those started after it began serving included (the shell
 * thread, the file-tool workers, libuv's pool), runs off the sandboxes'
 * CPUs, and every tenant's container runs on them alone. A list the machine
 * cannot honour stops the start before anything is made.
 */
import anyTest from 'ava';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { allowedCpus } from '../../src/cli/server-cpus.js';
import { formatCpuList } from '../../src/contracts/cpu-list.js';
import { runCli } from '../helpers/cli.js';
import { connectServeStdio } from '../helpers/mcp.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, toolcellContainersUnder } from '../helpers/hosting.js';
import { releaseLeftDisks, startCliServer } from '../helpers/hosting-cli.js';

const test = (await requireDocker(anyTest, 'hosting/sandbox-cpus')).serial;

const mine = await allowedCpus();
// The sandboxes get the last CPU this process may use, the server the rest (a host of two: 1 and 0).
const SANDBOX = formatCpuList(mine.slice(-1));
const SERVER = formatCpuList(mine.slice(0, -1));

/** Each thread of a process and the CPUs it may use. */
async function threadCpus(pid: number): Promise<Map<string, string>> {
  const threads = new Map<string, string>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const cpus = await allowedCpus(`${pid}/task/${tid}`).catch(() => undefined);
    if (cpus) threads.set(tid, formatCpuList(cpus));
  }
  return threads;
}

test("the server and every thread it starts stay off the sandboxes' CPUs; every tenant's containers run on them alone", async (t) => {
  t.timeout(240_000);
  t.true(mine.length >= 2, `this test needs a machine of two CPUs or more (it may use ${formatCpuList(mine)})`);
  const dir = await hostingFolder(t, 'toolcell-sandbox-cpus-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const keys = { acme: await addTenant(file, 'acme'), globex: await addTenant(file, 'globex', ['--limit', 'cpus=0.5']) };
  releaseLeftDisks(t, dataDir, Object.keys(keys));
  const server = await startCliServer(t, ['--tenants', file, '--data-dir', dataDir, '--sandbox-cpus', SANDBOX]);
  t.regex(server.stderr(), new RegExp(`sandboxes on CPU ${SANDBOX}, this server on CPU ${SERVER}\\n`));

  for (const [tenant, key] of Object.entries(keys)) {
    const { client } = await connectTenant(t, server.url, key);
    // Shell commands (the shell thread, a container), file tools (the worker pool), a search (a worker's RE2).
    const shell = await call(client, 'run_shell_command', { command: "sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status" });
    t.is(shell.errorType, undefined, shell.text);
    t.regex(shell.text, new RegExp(`^Output: ${SANDBOX}$`, 'm'), `${tenant}'s command sees only the sandboxes' CPUs`);
    t.is((await call(client, 'write_file', { file_path: 'a.txt', content: 'cpus\n' })).errorType, undefined);
    t.is((await call(client, 'grep_search', { pattern: 'cp(u|x)s' })).errorType, undefined);
  }

  const containers = await toolcellContainersUnder(dataDir);
  t.true(containers.length >= 2, `each tenant has a container (${containers.length})`);
  for (const id of containers) {
    const info = await createEngineClient().getContainer(id).inspect();
    t.is(info.HostConfig.CpusetCpus, SANDBOX, `container ${info.Name}: the engine's record`);
    if (info.State.Running) t.is(formatCpuList(await allowedCpus(info.State.Pid)), SANDBOX, `container ${info.Name} on the host`);
  }
  const threads = await threadCpus(server.pid);
  t.true(threads.size > 10, `the server has its threads (${threads.size})`);
  for (const [tid, cpus] of threads) t.is(cpus, SERVER, `server thread ${tid}`);
});

test('a list the machine cannot honour stops the start with what is wrong, before anything is made', async (t) => {
  const dir = await hostingFolder(t, 'toolcell-sandbox-cpus-');
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'acme');
  const dataDir = join(dir, 'data');
  const cases: Array<[string[], RegExp]> = [
    [['--sandbox-cpus', formatCpuList(mine)], new RegExp(`--sandbox-cpus ${formatCpuList(mine)} leaves this server no CPU of its own`)],
    [['--sandbox-cpus', '4000'], /--sandbox-cpus 4000 names CPU 4000, which this machine lacks \(it has 0(-\d+)?\)/],
    [['--sandbox-cpus', '1-0'], /has the range 1-0, which ends before it starts/],
    [['--sandbox-cpus', 'all'], /must be CPU numbers and ranges joined by commas/],
    [['--sandbox-cpus', SANDBOX, '--sandbox', 'none'], /--sandbox-cpus needs the Docker sandbox|--tenants needs the Docker sandbox/],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(['serve', '--http', '127.0.0.1:0', '--tenants', file, '--data-dir', dataDir, ...args]);
    t.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, message, args.join(' '));
    t.false(existsSync(dataDir), `${args.join(' ')}: no data dir made`);
  }
  t.deepEqual(await toolcellContainersUnder(dir), []);
});

test("serve over stdio takes --sandbox-cpus too: its session's container runs on those CPUs, the server on the rest", async (t) => {
  t.timeout(120_000);
  t.true(mine.length >= 2, `this test needs a machine of two CPUs or more (it may use ${formatCpuList(mine)})`);
  const workspace = await hostingFolder(t, 'toolcell-sandbox-cpus-local-');
  const { client, transport, stderr } = await connectServeStdio({ workspace, args: ['--approval', 'yolo', '--sandbox', 'docker', '--sandbox-cpus', SANDBOX] });
  t.teardown(() => client.close());
  const shell = await call(client, 'run_shell_command', { command: "sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status" });
  t.regex(shell.text, new RegExp(`^Output: ${SANDBOX}$`, 'm'), shell.text);
  t.regex(stderr(), new RegExp(`sandboxes on CPU ${SANDBOX}, this server on CPU ${SERVER}`));
  for (const [tid, cpus] of await threadCpus(transport.pid!)) t.is(cpus, SERVER, `server thread ${tid}`);
});
