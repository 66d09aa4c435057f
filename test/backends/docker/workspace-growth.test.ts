/**
 * One foreground command cannot grow the workspace's filesystem past the
 * per-command limits (bytes and inodes); background jobs are exempt.
 */
import anyTest from 'ava';
import { commandProcesses, requireDocker, runCommand, useSandboxBackend } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/workspace-quota');
const MiB = 1024 * 1024;
// Small limits, so these tests free little space afterwards: what others free on the filesystem
// while a command runs can hide that command's growth (see quota.py), and other suites measure it.
const sandbox = useSandboxBackend(test, { limits: { workspaceGrowthBytes: 32 * MiB, workspaceGrowthFiles: 300 } });

test.serial('a command that writes past the byte limit is killed, and says why', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'for i in $(seq 1 32); do head -c 4M /dev/zero > fill.$i || break; done; echo finished', { mode: 'pipes' });
  t.is(result.status.signal, 'SIGKILL');
  t.notRegex(result.stdout, /finished/);
  t.regex(result.stderr, /toolcell: killed: this command grew the workspace's disk use by .* \(the limit is 32\.0 MiB per command\)/);
  t.deepEqual(await commandProcesses(session.containerId), []);
  const left = await runCommand(session, 'du -sm . | cut -f1; rm -f fill.*', { mode: 'pipes' });
  t.true(Number(left.stdout.trim()) < 128, `far less than the 128 MiB the command tried to write: ${left.stdout.trim()} MiB`);
});

test.serial('a command that creates too many files is killed', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'mkdir many && cd many && for i in $(seq 1 60); do touch $(seq -f "f$i-%g" 1 20) || break; done; echo finished', {
    mode: 'pipes',
  });
  t.is(result.status.signal, 'SIGKILL');
  t.regex(result.stderr, /created or changed \d+ files in the workspace \(the limit is 300 per command\)/);
  await runCommand(session, 'rm -rf many');
});

test.serial('a command within the limits is not disturbed', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'head -c 1M /dev/zero > small && touch $(seq 1 50) && echo finished && rm -f small $(seq 1 50)', { mode: 'pipes' });
  t.deepEqual(result.status, { exitCode: 0, signal: null }, result.stderr);
  t.is(result.stdout, 'finished\n');
});

/** Runs `command` in a bystander session while another session writes past the limit: the bystander must not pay. */
async function bystanderSurvivesWriter(t: import('ava').ExecutionContext, command: string): Promise<void> {
  const writer = await sandbox.session(t, { label: 'writer' });
  const bystander = await sandbox.session(t, { label: 'bystander' });
  const waiting = runCommand(bystander, command, { mode: 'pipes' });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const fill = await runCommand(writer, 'for i in $(seq 1 32); do head -c 4M /dev/zero > fill.$i || break; done', { mode: 'pipes' });
  t.is(fill.status.signal, 'SIGKILL', 'the writer is stopped');
  const result = await waiting;
  t.deepEqual(result.status, { exitCode: 0, signal: null }, result.stderr);
  t.is(result.stdout, 'survived\n');
  await runCommand(writer, 'rm -f fill.*');
}

test.serial('writes of another workspace on the same filesystem are not charged to a command', async (t) => {
  await bystanderSurvivesWriter(t, 'sleep 3; echo survived');
});

test.serial(
  "a bystander with an unreaped child (a zombie, as a command killed by SIGXFSZ is) is not taken for hiding when another workspace's writes trigger a check",
  async (t) => {
    // `sleep 0` exits at once; its parent exec's into `sleep 3` and never reaps it. The kernel shows
    // a zombie's /proc entries as root's, which the check used to count as a process hiding its files.
    await bystanderSurvivesWriter(t, '(sleep 0 & exec sleep 3); echo survived');
  },
);

test.serial('deleting a file while still writing it does not hide the growth', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'exec 3>hidden.bin; rm hidden.bin; for i in $(seq 1 32); do head -c 4M /dev/zero >&3; done; echo finished', {
    mode: 'pipes',
  });
  t.is(result.status.signal, 'SIGKILL');
  t.notRegex(result.stdout, /finished/);
});

test.serial('locking a folder against inspection does not hide the growth', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(
    session,
    'mkdir locked && for i in $(seq 1 32); do head -c 4M /dev/zero > locked/f.$i; chmod 000 locked; chmod 700 locked; done; chmod 000 locked; sleep 1; echo finished',
    { mode: 'pipes' },
  );
  await runCommand(session, 'chmod 700 locked; rm -rf locked');
  t.is(result.status.signal, 'SIGKILL');
  t.notRegex(result.stdout, /finished/);
});
