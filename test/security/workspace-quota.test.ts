/**
 * Disk and inode exhaustion through the workspace. The workspace is a host
 * folder mounted read-write, so what a command writes there lands on the
 * host's disk. These cases run with a long wall-clock limit, so that only a
 * real bound (not the timeout) can stop them, and they write at most a few
 * GB and a few hundred thousand files, removed afterwards.
 */
import anyTest from 'ava';
import { execFile } from 'node:child_process';
import { lstat, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, requireDocker } from '../helpers/docker.js';
import { SandboxSession, commandProcesses } from '../helpers/security.js';
import { UNDER_GVISOR } from '../helpers/test-runtime.js';

const execFileAsync = promisify(execFile);
const docker = await requireDocker(anyTest, 'security/workspace-quota');
const test = docker.serial;

const GiB = 1024 ** 3;
/**
 * The per-call quota is enforced by sampling every few ms: allow what is written between two samples.
 * Under gVisor each system call of a sample costs ~84 µs and, under the suite's load, samples come
 * far apart: a background job's writes reached 1.09 GiB against the 1 GiB limit there (CI's gVisor
 * run). Still a bound far below filling the disk, which is the claim.
 */
const OVERSHOOT = (UNDER_GVISOR ? 256 : 64) * 1024 ** 2;
let session: SandboxSession;
let containerId: string;

docker.before(async () => {
  // Long enough that only a real bound can stop these calls: writing a GiB through gVisor's file system
  // took over 90 s on a loaded CI machine (CI run 25), so the limit is longer there.
  session = await SandboxSession.open({ timeoutSeconds: UNDER_GVISOR ? 300 : 90 });
  [containerId = ''] = await session.containerIds();
});
docker.after.always(async () => {
  await session?.shell('rm -rf fill.* inodes').catch(() => undefined);
  await session?.close();
});

/** Bytes and entries under a host folder (not following symlinks). */
async function usage(dir: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    entries++;
    if (entry.isFile()) bytes += (await lstat(join(entry.parentPath ?? entry.path, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return { bytes, entries };
}

test('one call cannot grow the workspace past the file-size limit by writing many files', async (t) => {
  // Writing the GiB takes up to a minute and a half under gVisor on a loaded machine (seen in CI).
  t.timeout(420_000);
  // 12 files of 256 MiB: each is under the 1 GiB RLIMIT_FSIZE; together 3 GiB.
  const outcome = await session.shell('for i in $(seq 1 12); do head -c 256M /dev/zero > fill.$i || break; done; echo wrote');
  const { bytes } = await usage(session.workspace);
  await session.shell('rm -f fill.*');
  t.log(outcome.text.slice(0, 400));
  t.regex(outcome.output, /limit is 1\.0 GiB per command/, 'the call was stopped by the workspace quota');
  t.true(bytes <= 1 * GiB + OVERSHOOT, `one call grew the host's disk use by ${(bytes / GiB).toFixed(2)} GiB through the workspace`);
  t.deepEqual(await commandProcesses(containerId), []);
  await session.assertAlive(t);
});

test('space reserved without writing it (fallocate from several processes at once) cannot outrun the sampling', async (t) => {
  // One fallocate(2) reserves up to the file-size limit in microseconds: a loop of them grew the
  // workspace by 2.9 GiB between two samples against the 1 GiB limit. Now they are refused (the
  // filter), and glibc's posix_fallocate falls back to writing the blocks, which the sampling sees.
  t.timeout(420_000);
  const outcome = await session.shell(`python3 - <<'PY'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
children = []
for worker in range(4):
    pid = os.fork()
    if pid == 0:
        refused = 0
        for i in range(12):
            fd = os.open(f"reserve.{worker}.{i}", os.O_RDWR | os.O_CREAT, 0o600)
            for mode in (0, 1, 0x10):  # default, KEEP_SIZE, ZERO_RANGE
                if libc.fallocate(fd, mode, 0, 1000 << 20) < 0:
                    refused += 1
            os.close(fd)
        print("worker", worker, "refused", refused, flush=True)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
for i in range(12):
    fd = os.open(f"written.{i}", os.O_RDWR | os.O_CREAT, 0o600)
    os.posix_fallocate(fd, 0, 1000 << 20)
    os.close(fd)
print("survived")
PY`);
  const { bytes } = await usage(session.workspace);
  await session.shell('rm -f reserve.* written.*');
  t.log(outcome.output.slice(-400));
  t.true(bytes <= 1 * GiB + OVERSHOOT, `one call grew the host's disk use by ${(bytes / GiB).toFixed(2)} GiB through the workspace`);
  t.notRegex(outcome.output, /survived/);
  t.regex(outcome.output, /limit is 1\.0 GiB per command/, 'the written blocks were stopped by the workspace quota');
  t.deepEqual(await commandProcesses(containerId), []);
  await session.assertAlive(t);
});

test('one call cannot exhaust the host filesystem inodes through the workspace', async (t) => {
  // Creating 100,000 files takes about 2 minutes under gVisor (each system call ~84 µs), past ava's default.
  t.timeout(420_000);
  const outcome = await session.shell(`python3 -c 'import os
os.makedirs("inodes", exist_ok=True)
n = 0
try:
    for n in range(300000):
        os.close(os.open(f"inodes/{n}", os.O_CREAT | os.O_WRONLY))
    print("created", n + 1)
except OSError as e:
    print("stopped", n, e.strerror)'`);
  const { entries } = await usage(session.workspace);
  await session.shell('rm -rf inodes');
  t.log(outcome.text.slice(0, 400));
  // The supervisor samples every 5 ms near the limit and kills at the first sample past the 100,000-file limit;
  // what is created between two samples depends on the host's load (1,506 more at load 12, seen)
  // and on the runtime: under gVisor every system call of the sampling and of freezing the tree
  // costs ~84 µs (against 0.2 µs), and under the suite's load a call got to 129,442 files before it
  // was frozen (104,753 on a quiet machine). So the bound is the limit plus 10% under runc and
  // plus 50% under gVisor: far below exhausting the filesystem, which is the claim.
  const slack = UNDER_GVISOR ? 1.5 : 1.1;
  t.true(entries <= 100_000 * slack, `one call created ${entries} files on the host filesystem (at most ${100_000 * slack})`);
  t.deepEqual(await commandProcesses(containerId), []);
  await session.assertAlive(t);
});

test('a background job cannot fill the host disk through the workspace either', async (t) => {
  // Writing the first GiB takes seconds under runc, and over a minute under gVisor on a loaded CI machine (seen).
  t.timeout(420_000);
  // 12 × 256 MiB in the background, then a marker file once done (or stopped).
  const started = await session.shell('for i in $(seq 1 12); do head -c 256M /dev/zero > fill.bg.$i || break; done; touch bg-done', { background: true });
  t.is(started.status, 'success', started.text);
  // Backstop only: a job never stopped fails here, however long the machine takes to write the GiB it may.
  const deadline = Date.now() + 360_000;
  let finished = false;
  while (Date.now() < deadline) {
    const left = await commandProcesses(containerId);
    finished = left.length === 0;
    if (finished) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const { bytes } = await usage(session.workspace);
  await session.shell('rm -f fill.bg.* bg-done');
  t.true(finished, 'the background job ended (or was stopped)');
  t.true(bytes <= 1 * GiB + OVERSHOOT, `a background job grew the host's disk use by ${(bytes / GiB).toFixed(2)} GiB through the workspace`);
  await session.assertAlive(t);
});

test('space a neighbour frees while a call writes is no allowance: what the call wrote before stays counted', async (t) => {
  // A neighbour on the workspace's filesystem (here the test itself) holds 1 GiB and frees it while the
  // call, having written 600 MiB, waits; then the call writes 600 MiB more. The statvfs sample rises above
  // the call's baseline: following it without a scan would forgive the first 600 MiB.
  const neighbour = join(dirname(session.workspace), `toolcell-sec-neighbour-${process.pid}`);
  await execFileAsync('fallocate', ['-l', '1G', neighbour]);
  t.teardown(() => rm(neighbour, { force: true }));
  const running = session.shell('head -c 600M /dev/zero > grow.1 && until [ -e go ]; do sleep 0.05; done; head -c 600M /dev/zero > grow.2; echo survived');
  const first = join(session.workspace, 'grow.1');
  t.true(await eventually(async () => (await stat(first).catch(() => ({ size: 0 }))).size === 600 * 1024 ** 2, 120_000), 'the call wrote its first 600 MiB');
  await rm(neighbour);
  await writeFile(join(session.workspace, 'go'), '');
  const outcome = await running;
  const { bytes } = await usage(session.workspace);
  await session.shell('rm -f grow.* go');
  t.log(outcome.text.slice(0, 400));
  t.regex(outcome.output, /limit is 1\.0 GiB per command/, 'the call was stopped by the workspace quota');
  t.notRegex(outcome.output, /survived/);
  t.true(bytes <= 1 * GiB + OVERSHOOT, `the call grew the workspace by ${(bytes / GiB).toFixed(2)} GiB`);
  await session.assertAlive(t);
});

test('growth hidden in files the command user does not own (root-owned files the ACL grant made writable) still counts', async (t) => {
  // A root-owned workspace with files that exist before the session (a CI checkout).
  const { mkdtemp, realpath } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-sec-ws-owned-')));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  for (let i = 0; i < 4; i++) await writeFile(join(workspace, `checked-out.${i}`), 'x\n');
  if (UNDER_GVISOR) {
    // Under gVisor a root-owned workspace is refused before anything runs (its commands would run as uid 0: docker-backend.ts).
    const refused = await SandboxSession.open({ workspace, timeoutSeconds: 90 });
    t.teardown(() => refused.close());
    const outcome = await refused.shell('echo ran');
    t.regex(outcome.text, /belongs to root, so its commands would run as uid 0, which gVisor \(runsc\)/);
    return;
  }
  const own = await SandboxSession.open({ workspace, timeoutSeconds: 90 });
  t.teardown(() => own.close());
  const outcome = await own.shell('for f in checked-out.*; do head -c 900M /dev/zero >> "$f" || break; done; stat -c "%U %s" checked-out.*');
  const { bytes } = await usage(workspace);
  await own.shell('for f in checked-out.*; do : > "$f"; done');
  t.log(outcome.output.slice(0, 300));
  t.true(bytes <= 1 * GiB + OVERSHOOT, `one call grew the host's disk use by ${(bytes / GiB).toFixed(2)} GiB by appending to files it does not own`);
  await own.assertAlive(t);
});

/**
 * Deleted files held where the supervisor's /proc/<pid>/fd scan cannot
 * measure them. Each holds 400 MiB for 4 files (1.6 GiB against the 1 GiB
 * limit), then waits while the host's disk holds them: the call must be
 * killed meanwhile, not live to print "survived".
 */
const HOLDERS = {
  'descriptors in flight (SCM_RIGHTS on a socket, closed everywhere else)': `a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
def hold(fd):
    a.sendmsg([], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    os.close(fd)`,
  // libc's mmap, not Python's (which keeps a dup of the fd).
  'shared mappings of deleted files (the fd closed)': `import ctypes
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
def hold(fd):
    assert libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0) not in (None, 2 ** 64 - 1)
    os.close(fd)`,
};

for (const [label, holder] of Object.entries(HOLDERS)) {
  test(`growth held only in ${label} still counts`, async (t) => {
    const outcome = await session.shell(`python3 - <<'PY'
import array, mmap, os, socket, time
${holder}
def free():
    s = os.statvfs(".")
    return s.f_bavail * s.f_frsize >> 20
before = free()
print("free-before", before, flush=True)
# Written in 1 MiB blocks: posix_fallocate's fallback (the sandbox refuses reserving) writes a byte per 4 KiB block.
block = bytes(1 << 20)
for i in range(4):
    fd = os.open(f"held.{i}", os.O_RDWR | os.O_CREAT, 0o600)
    for _ in range(400):
        os.write(fd, block)
    os.unlink(f"held.{i}")
    hold(fd)
    time.sleep(0.2)
print("holding", flush=True)
holding = free()
print("free-holding", holding, flush=True)
# Held on the host's disk (not so under gVisor for descriptors in flight): the limit must kill the call meanwhile.
if before - holding >= 1024:
    time.sleep(30)
print("survived")
PY`);
    t.log(outcome.output.slice(-300));
    const before = Number(/free-before (\d+)/.exec(outcome.output)?.[1]);
    const holding = Number(/free-holding (\d+)/.exec(outcome.output)?.[1]);
    if (UNDER_GVISOR && label.startsWith('descriptors') && before - holding < 1024) {
      // gVisor lets the host file go when its last descriptor is closed, in flight or not: nothing is held on the host disk.
      t.pass(`the host disk did not lose the space (${before} → ${holding} MiB free)`);
      return;
    }
    t.notRegex(outcome.output, /survived/, 'the call held 1.6 GiB past the 1 GiB limit and lived');
    t.regex(outcome.output, /toolcell: killed: .*cannot be measured/, 'killed by the workspace limit, saying why');
    t.deepEqual(await commandProcesses(containerId), []);
    await session.assertAlive(t);
  });
}
