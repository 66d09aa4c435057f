/**
 * The hosting server's event loop above the work tenants choose: the real
 * `toolcell serve --tenants` raises its main thread to nice -5 at start,
 * while the file-tool threads it starts later still lower theirs to 10; a
 * server the operator started at another nice keeps it, and says so.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HOSTING_EVENT_LOOP_NICE } from '../../src/cli/server-priority.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder } from '../helpers/hosting.js';
import { releaseLeftDisks, startCliServer } from '../helpers/hosting-cli.js';

const test = (await requireDocker(anyTest, 'hosting/server-priority')).serial;

/** The nice of each thread of a process (field 19 of its stat), by thread id. */
async function threadNices(pid: number): Promise<Map<number, number>> {
  const nices = new Map<number, number>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => undefined);
    if (stat !== undefined) nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nices;
}

async function serveWithTenant(t: ExecutionContext, wrapper: string[] = []) {
  const dir = await hostingFolder(t, 'toolcell-server-priority-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const key = await addTenant(file, 'acme');
  releaseLeftDisks(t, dataDir, ['acme']);
  const server = await startCliServer(t, ['--tenants', file, '--data-dir', dataDir], 120_000, wrapper);
  const { client } = await connectTenant(t, server.url, key);
  // The threads a session starts: the shell thread (a command), the file-tool workers (a file tool).
  t.is((await call(client, 'run_shell_command', { command: 'echo started' })).errorType, undefined);
  t.is((await call(client, 'write_file', { file_path: 'a.txt', content: 'a\n' })).errorType, undefined);
  return server;
}

test('the event loop runs at nice -5; the file-tool threads started after it still run at 10', async (t) => {
  t.timeout(180_000);
  t.is(process.getuid?.(), 0, 'raising a priority needs root here');
  const server = await serveWithTenant(t);
  const nices = await threadNices(server.pid);
  t.is(nices.get(server.pid), HOSTING_EVENT_LOOP_NICE, 'the main thread');
  t.true([...nices.values()].includes(10), `a file-tool thread at nice 10 (${JSON.stringify([...nices.values()])})`);
  t.notRegex(server.stderr(), /event loop (stays|keeps)/);
});

test("a server started at another nice keeps the operator's choice, and says so", async (t) => {
  t.timeout(180_000);
  const server = await serveWithTenant(t, ['nice', '-n', '3']);
  t.is((await threadNices(server.pid)).get(server.pid), 3);
  t.regex(server.stderr(), /the event loop keeps nice 3, as started/);
});
