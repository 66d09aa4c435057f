/**
 * Disk and inode exhaustion through the workspace. The workspace is a host
 * folder mounted read-write, so what a command writes there lands on the
 * host's disk. These cases run with a long wall-clock limit, so that only a
 * real bound (not the timeout) can stop them, and they write at most a few
 * GB and a few hundred thousand files, removed afterwards.
 */
import anyTest from 'ava';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, commandProcesses } from '../helpers/security.js';

const docker = await requireDocker(anyTest, 'security/workspace-quota');
const test = docker.serial;

const GiB = 1024 ** 3;
let session: SandboxSession;
let containerId: string;

docker.before(async () => {
  session = await SandboxSession.open({ timeoutSeconds: 90 });
  [containerId = ''] = await session.containerIds();
});
docker.after.always(async () => {
  await session?.shell('rm -rf fill.* inodes').catch(() => undefined);
  await session?.close();
});

test('one call cannot grow the workspace past the file-size limit by writing many files', async (t) => {
  // 12 files of 256 MiB: each is under the 1 GiB RLIMIT_FSIZE; together 3 GiB.
  const outcome = await session.shell('for i in $(seq 1 12); do head -c 256M /dev/zero > fill.$i || break; done; du -sb . | cut -f1 | sed "s/^/total=/"');
  const total = Number(/total=(\d+)/.exec(outcome.output)?.[1] ?? NaN);
  await session.shell('rm -f fill.*');
  t.true(total <= 1 * GiB, `one call grew the host's disk use by ${(total / GiB).toFixed(2)} GiB through the workspace`);
  t.deepEqual(await commandProcesses(containerId), []);
  await session.assertAlive(t);
});

test('one call cannot exhaust the host filesystem inodes through the workspace', async (t) => {
  const outcome = await session.shell(`python3 -c 'import os
os.makedirs("inodes", exist_ok=True)
n = 0
try:
    for n in range(300000):
        os.close(os.open(f"inodes/{n}", os.O_CREAT | os.O_WRONLY))
    print("created", n + 1)
except OSError as e:
    print("stopped", n, e.strerror)'`);
  await session.shell('rm -rf inodes');
  t.notRegex(outcome.output, /created 300000/, `one call created 300,000 files on the host filesystem: ${outcome.output.slice(0, 200)}`);
  t.deepEqual(await commandProcesses(containerId), []);
  await session.assertAlive(t);
});
