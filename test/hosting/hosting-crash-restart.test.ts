import anyTest from 'ava';
import { join } from 'node:path';
import { readAuditLines } from '../helpers/audit-log.js';
import { eventually, requireDocker, runningProcesses } from '../helpers/docker.js';
import { call, connectAs, addTenant, connectTenant, hostingFolder, toolcellContainersUnder } from '../helpers/hosting.js';
import { releaseLeftDisks, startCliServer } from '../helpers/hosting-cli.js';

/**
 * `kill -9` of the real `toolcell serve --tenants` while two tenants' calls
 * run: its containers outlive it; started again on the same data dir it
 * removes them, the tenants' files are intact, the audit log parses line by
 * line (a torn last line allowed only at its end), and new sessions work.
 */
const test = (await requireDocker(anyTest, 'hosting/crash-restart')).serial;

const TENANTS = ['alpha', 'beta'] as const;

test('after kill -9 during calls, a restart removes the leftover containers; workspaces and the audit log are intact; new sessions work', async (t) => {
  t.timeout(400_000);
  const started = Date.now();
  const phase = (name: string) => t.log(`${name} at ${Math.round((Date.now() - started) / 100) / 10} s`);
  const dir = await hostingFolder(t, 'toolcell-hosting-crash-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const audit = join(dir, 'audit.jsonl');
  const keys: Record<string, string> = {};
  for (const tenant of TENANTS) keys[tenant] = await addTenant(file, tenant);
  releaseLeftDisks(t, dataDir, TENANTS);
  const args = ['--tenants', file, '--data-dir', dataDir, '--audit', audit];

  const first = await startCliServer(t, args);
  phase('first server up');
  const running: Array<Promise<unknown>> = [];
  const clients: Array<{ close(): Promise<void> }> = [];
  for (const tenant of TENANTS) {
    const session = await connectAs(first.url, keys[tenant]!);
    clients.push(session.client);
    const written = await call(session.client, 'write_file', { file_path: 'kept.txt', content: `${tenant}'s file, written before the crash\n` });
    t.is(written.errorType, undefined, written.text);
    const shell = await call(session.client, 'run_shell_command', { command: `mkdir -p out && echo "${tenant} from the shell" > out/shell.txt && echo ok` });
    t.true(shell.text.includes('ok'), shell.text);
    // Never answered: the server dies under it.
    running.push(call(session.client, 'run_shell_command', { command: `sleep 600; echo ${tenant}-never` }).catch((error: unknown) => error));
    running.push(call(session.client, 'write_file', { file_path: 'also.txt', content: `${tenant} also\n` }).catch((error: unknown) => error));
  }
  // Both tenants' sleeps are running in their containers.
  const sleeping = async () => {
    const ids = await toolcellContainersUnder(dataDir);
    const withSleep = await Promise.all(ids.map(async (id) => ((await runningProcesses(id)).some((row) => row.args.startsWith('sleep 600')) ? id : undefined)));
    return withSleep.filter((id): id is string => id !== undefined);
  };
  t.true(await eventually(async () => (await sleeping()).length === TENANTS.length, 120_000), 'a sleep runs in each tenant’s container');
  const before = await toolcellContainersUnder(dataDir);
  phase('calls running');

  t.like(await first.stop('SIGKILL'), { signal: 'SIGKILL' });
  // The killed server's containers stay behind, unless another toolcell process on this engine (a
  // parallel test file, any `toolcell exec`) has already removed them: every start removes the
  // containers of dead owners. Either way none may be left once the restarted server is up.
  const leftover = await toolcellContainersUnder(dataDir);
  if (leftover.length < before.length) t.log(`${before.length - leftover.length} of the killed server's containers were removed by another process first`);
  const atCrash = await readAuditLines(audit);
  t.true(
    atCrash.some((line) => line['event'] === 'session_open'),
    'the audit log parses up to its last whole line and holds the sessions',
  );
  // The SDK client does not notice a dead server until its request timeout (it tries to resume the stream): closing ends its calls.
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(running);
  phase('killed');

  const second = await startCliServer(t, args);
  phase('second server up');
  t.true(
    await eventually(async () => (await toolcellContainersUnder(dataDir)).every((id) => !leftover.includes(id) && !before.includes(id)), 60_000),
    'the leftover containers are removed at start-up',
  );
  phase('leftovers removed');
  for (const tenant of TENANTS) {
    const session = await connectTenant(t, second.url, keys[tenant]!);
    const kept = await call(session.client, 'read_file', { file_path: 'kept.txt' });
    t.is(kept.errorType, undefined, kept.text);
    t.true(kept.text.includes(`${tenant}'s file, written before the crash`), kept.text);
    const shell = await call(session.client, 'run_shell_command', { command: 'cat out/shell.txt; cat kept.txt; echo after-restart' });
    t.is(shell.errorType, undefined, shell.text);
    t.true(shell.text.includes(`${tenant} from the shell`) && shell.text.includes(`${tenant}'s file`) && shell.text.includes('after-restart'), shell.text);
    t.false(shell.text.includes(`${TENANTS.find((other) => other !== tenant)!}'s file`), 'each tenant sees only its own workspace');
    await session.close();
  }

  const { code } = await second.stop('SIGTERM');
  phase('second server stopped');
  t.is(code, 0, second.stderr());
  t.deepEqual(await toolcellContainersUnder(dataDir), [], 'no container is left after the second server stops');
  // Whole lines of both runs parse, in order: the restart appended after the crash's last whole line.
  const lines = await readAuditLines(audit);
  t.deepEqual(lines.slice(0, atCrash.length), atCrash);
  t.true(lines.slice(atCrash.length).some((line) => line['event'] === 'session_open' && line['tenant'] === 'alpha'));
});
