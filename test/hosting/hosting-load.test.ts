import anyTest from 'ava';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { generateApiKey } from '../../src/hosting/auth/api-key.js';
import { readTenantsFile, writeTenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { mapLimited } from '../helpers/map-limited.js';
import { addTenant, call, connectAs, hostingFolder, startHosting, toolcellContainersUnder, type Connection } from '../helpers/hosting.js';

/**
 * Load: 20 tenants × 3 sessions, all 60 open at once, each session running a
 * fixed mix of file and shell calls through the MCP SDK client over real
 * HTTP. Every call succeeds with the content it should have, and after the
 * server closes no container of its tenants is left. Bounded by counts, not
 * time: nothing waits for a clock and no duration is asserted.
 */
const test = (await requireDocker(anyTest, 'hosting/load')).serial;

const TENANTS = 20;
const SESSIONS_PER_TENANT = 3;
/** Sessions opened, and sessions running their calls, at once: enough to load the server, few enough for a 2-core machine. */
const CONCURRENCY = 8;

interface Slot {
  tenant: string;
  index: number;
  connection: Connection;
}

/** One session's calls: write, read back, list (glob), and a shell command that reads the file in the container. */
async function runMix(t: { is(a: unknown, b: unknown, message?: string): void; true(value: boolean, message?: string): void }, slot: Slot): Promise<void> {
  const { client } = slot.connection;
  const name = `s${slot.index}.txt`;
  const content = `${slot.tenant} session ${slot.index} ${slot.connection.sessionId}`;
  const where = `${slot.tenant}/${slot.index}`;

  const written = await call(client, 'write_file', { file_path: name, content });
  t.is(written.errorType, undefined, `${where} write_file: ${written.text}`);

  const read = await call(client, 'read_file', { file_path: name });
  t.is(read.errorType, undefined, `${where} read_file: ${read.text}`);
  t.true(read.text.includes(content), `${where} read_file returned ${JSON.stringify(read.text)}`);

  const found = slot.index % 2 === 0 ? await call(client, 'list_directory', { dir_path: '.' }) : await call(client, 'glob', { pattern: '*.txt' });
  t.is(found.errorType, undefined, `${where} list/glob: ${found.text}`);
  t.true(found.text.includes(name), `${where} list/glob did not show ${name}: ${found.text}`);

  const shell = await call(client, 'run_shell_command', { command: `cat ${name}; echo; echo done-${slot.index}` });
  t.is(shell.errorType, undefined, `${where} run_shell_command: ${shell.text}`);
  t.true(shell.text.includes(content) && shell.text.includes(`done-${slot.index}`), `${where} run_shell_command returned ${JSON.stringify(shell.text)}`);
}

test('20 tenants × 3 sessions, all open at once, run file and shell calls without a failure; no container is left after close', async (t) => {
  // 60 containers start on a 2-core machine: past AVA's 120 s default when the machine is shared.
  t.timeout(400_000);
  const started = Date.now();
  const phase = (name: string) => t.log(`${name} at ${Math.round((Date.now() - started) / 100) / 10} s`);
  const dir = await hostingFolder(t, 'toolcell-hosting-load-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  // The first tenant through the command, as an operator makes it; the other 19 written in one go
  // with the same key code, since a CLI start per tenant was a third of this test's time.
  const keys: Array<[string, string]> = [['load0', await addTenant(file, 'load0')]];
  const content = (await readTenantsFile(file))!;
  for (let i = 1; i < TENANTS; i += 1) {
    const made = generateApiKey();
    content.tenants[`load${i}`] = { keys: [{ id: made.id, hash: made.hash, createdAt: new Date().toISOString() }] };
    keys.push([`load${i}`, made.key]);
  }
  await writeTenantsFile(file, content);
  phase('tenants added');
  const hosting = await startHosting({ tenantsFile: file, dataDir });
  phase('server started');
  t.teardown(() => hosting.close());

  const plan = keys.flatMap(([tenant, key]) => Array.from({ length: SESSIONS_PER_TENANT }, (_, index) => ({ tenant, key, index })));
  const slots: Slot[] = await mapLimited(plan, CONCURRENCY, async ({ tenant, key, index }) => ({
    tenant,
    index,
    connection: await connectAs(hosting.server.url, key),
  }));
  t.teardown(() => Promise.all(slots.map((slot) => slot.connection.close().catch(() => {}))).then(() => {}));

  phase('sessions open');
  const open = hosting.server.listSessions();
  t.is(open.length, TENANTS * SESSIONS_PER_TENANT, 'all 60 sessions are live at once');
  t.deepEqual(open.map((session) => session.id).sort(), slots.map((slot) => slot.connection.sessionId).sort());
  for (const [tenant] of keys) t.is(open.filter((session) => session.tenant === tenant).length, SESSIONS_PER_TENANT, tenant);

  await mapLimited(slots, CONCURRENCY, (slot) => runMix(t, slot));
  phase('calls done');
  t.is(hosting.server.listSessions().length, TENANTS * SESSIONS_PER_TENANT, 'no session was lost while the calls ran');
  const containers = await toolcellContainersUnder(dataDir);
  t.true(containers.length > 0, 'the shell calls ran in containers of this server');

  await hosting.close();
  phase('server closed');
  t.deepEqual(await toolcellContainersUnder(dataDir), [], 'no container is left after close');
});
