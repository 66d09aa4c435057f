import anyTest from 'ava';
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { PrepareWorkspace } from '../../src/hosting/tenants/tenant-workspace.js';
import { folderWorkspace } from '../../src/hosting/tenants/tenant-workspace.js';
import { eventually, requireDocker, runningProcesses } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, runningContainersUnder, startHosting, toolcellContainersUnder } from '../helpers/hosting.js';
import { MiB, TenantDisks } from '../helpers/tenant-disks.js';

/**
 * Noisy neighbour: tenant A, on small limits, fills every call slot it has
 * with a fork bomb, a 1 GB output flood, a fill of its disk cap and CPU
 * spins, all at once; meanwhile tenant B opens a session and every one of
 * its calls succeeds with the right output. Then A's calls are cancelled and
 * nothing of A is left once its session closes. No duration is asserted: B
 * succeeding while A is busy is the property.
 */
const test = (await requireDocker(anyTest, 'hosting/noisy-neighbour')).serial;

const SLOTS = 5;
const NOISY_LIMITS = ['pids=64', 'memory=256m', 'cpus=0.5', `concurrentCalls=${SLOTS}`, 'diskBytes=64m'].flatMap((limit) => ['--limit', limit]);
/** After its first job each call spins, so it holds its slot and a CPU share until cancelled. */
const SPIN = 'while :; do :; done';

/** The disk cap is a loop-mounted filesystem: root only. Under CI=true it must be tested; elsewhere that part is skipped. */
function diskCapAvailable(t: { fail(message: string): void; log(message: string): void }): boolean {
  if (process.getuid?.() === 0) return true;
  if (process.env['CI'] === 'true') t.fail('the disk-cap part needs root, and CI=true');
  else t.log('disk-cap part skipped: mounting a filesystem image needs root');
  return false;
}

test("while tenant A runs a fork bomb, a 1 GB output flood, a disk fill and CPU spins in every slot, tenant B's calls all succeed; nothing of A is left", async (t) => {
  t.timeout(400_000);
  const dir = await hostingFolder(t, 'toolcell-hosting-noisy-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const keys = { noisy: await addTenant(file, 'noisy', NOISY_LIMITS), quiet: await addTenant(file, 'quiet') };

  // As `toolcell serve` does as root: A's workspace is a filesystem capped at its diskBytes.
  const capped = diskCapAvailable(t);
  const disks = capped ? await TenantDisks.open({ dataDir }) : undefined;
  t.teardown(async () => disks?.releaseAll());
  const folders = folderWorkspace({ dataDir, workspaceOf: () => undefined });
  const workspaces = new Map<string, string>();
  const prepareWorkspace: PrepareWorkspace = async (tenant, limits, owner) => {
    const prepared = disks && tenant === 'noisy' ? await disks.prepare(tenant, { diskBytes: limits.diskBytes }, owner) : await folders(tenant, limits, owner);
    workspaces.set(tenant, prepared.path);
    return prepared;
  };
  const hosting = await startHosting({ tenantsFile: file, dataDir, prepareWorkspace });
  t.teardown(() => hosting.close());

  const noisy = await connectTenant(t, hosting.server.url, keys.noisy);
  // Server-wide, so B's calls count too: read it while B runs none.
  const noisyCalls = () => hosting.server.runningCalls;
  const cancel = new AbortController();
  const attacks: Array<Promise<unknown>> = [];
  const ended: Array<{ command: string; outcome: string }> = [];
  const attack = (command: string) =>
    attacks.push(
      call(noisy.client, 'run_shell_command', { command }, cancel.signal).then(
        (result) => ended.push({ command, outcome: `${result.errorType ?? 'ok'}: ${result.text.slice(0, 300)}` }),
        (error: unknown) => ended.push({ command, outcome: String(error) }),
      ),
    );
  t.teardown(() => cancel.abort());

  // Every job but the bomb starts first: once the bomb holds every pid, not even a new `docker exec` starts in A's container.
  if (capped) attack(`dd if=/dev/zero of=fill bs=1M count=${128} 2>/dev/null; ${SPIN}`);
  else attack(SPIN);
  attack(`head -c 1G /dev/zero | base64; ${SPIN}`);
  for (let i = 0; i < SLOTS - 3; i += 1) attack(SPIN);
  t.true(await eventually(async () => noisyCalls() === SLOTS - 1, 60_000, 20), `A runs ${noisyCalls()} calls`);
  // A call counts as running from its admission, and a new session's container starts in the
  // background of its first call: the container may be a moment behind the count.
  // Which container that is: the running one where A's jobs are (one still being created may sit beside it).
  let container: string | undefined;
  t.true(
    await eventually(async () => {
      for (const id of await runningContainersUnder(workspaces.get('noisy')!)) {
        const rows = (await runningProcesses(id)).map((row) => row.args);
        if (rows.some((args) => args.startsWith('base64')) && rows.filter((args) => args.includes(SPIN)).length >= SLOTS - 1) container = id;
      }
      return container !== undefined;
    }, 60_000),
    "A's jobs are running in its container",
  );
  attack('bomb() { bomb | bomb & }; while :; do bomb; done');
  t.true(await eventually(async () => noisyCalls() === SLOTS, 60_000, 20), `A runs ${noisyCalls()} calls`);
  // The bomb is live: A's container holds close to its 64 pids.
  t.true(await eventually(async () => (await runningProcesses(container!)).length >= 48, 60_000), "the fork bomb fills A's pids");
  const refused = await call(noisy.client, 'run_shell_command', { command: 'echo one-more' });
  t.is(refused.errorType, 'quota_exceeded', `every slot of A is taken: ${refused.text}`);
  if (capped) {
    // The fill asks for twice the cap: its writer exiting (with ENOSPC) is the disk being full.
    // How much room ext4 still reports free then moves with delayed allocation, so that is not the check.
    t.true(await eventually(async () => !(await runningProcesses(container!)).some((row) => row.args.startsWith('dd ')), 120_000), "A's disk cap fills");
    const workspace = workspaces.get('noisy')!;
    const fs = await statfs(workspace);
    t.true((fs.blocks - fs.bfree) * fs.bsize <= 64 * MiB, 'A holds no more than its cap');
  }

  // B, opened while A is at it: every call succeeds with its own output.
  const quiet = await connectTenant(t, hosting.server.url, keys.quiet);
  for (let i = 0; i < 5; i += 1) {
    const echo = await call(quiet.client, 'run_shell_command', { command: `echo quiet-${i}-$((6 * 7))` });
    t.is(echo.errorType, undefined, echo.text);
    t.true(echo.text.includes(`quiet-${i}-42`), echo.text);
  }
  const content = 'written while the neighbour is noisy\n'.repeat(100);
  t.is((await call(quiet.client, 'write_file', { file_path: 'note.txt', content })).errorType, undefined);
  const read = await call(quiet.client, 'read_file', { file_path: 'note.txt' });
  t.is(read.errorType, undefined, read.text);
  t.true(read.text.includes(content.trim()), read.text.slice(0, 200));
  const listed = await call(quiet.client, 'run_shell_command', { command: 'wc -c < note.txt' });
  t.is(listed.errorType, undefined, listed.text);
  t.regex(listed.text, new RegExp(`\\b${content.length}\\b`), listed.text);
  t.is(noisyCalls(), SLOTS, `A was still busy while B worked; ended: ${JSON.stringify(ended)}`);

  // A's calls end: cancelled, down to the server (its slots free), then its session closes and its container goes.
  cancel.abort();
  await Promise.all(attacks);
  t.is(ended.length, SLOTS);
  t.true(await eventually(async () => noisyCalls() === 0, 120_000, 50), `A still runs ${noisyCalls()} calls after the cancel`);
  await noisy.close();
  t.true(await eventually(async () => (await toolcellContainersUnder(workspaces.get('noisy')!)).length === 0, 60_000), "A's container is removed");
  t.is((await call(quiet.client, 'run_shell_command', { command: 'echo still-here' })).text.includes('still-here'), true);
});
