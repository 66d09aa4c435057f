/**
 * A workspace on a loop-mounted image (src/backends/docker/disk-cap/): the kernel
 * bounds what commands can take, however they hold it. Here with the
 * supervisor's growth counting turned off, so the filesystem bound alone is
 * what stops the attack that counting alone could not see (descriptors in
 * flight). Also prints what the bound costs: creating and mounting the image,
 * and write throughput beside a plain host folder.
 */
import anyTest from 'ava';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createLoopImageCap } from '../../../src/backends/docker/disk-cap/loop-image.js';
import { makeWorkspace, requireDocker, runCommand, createTestBackend } from '../../helpers/docker.js';
import { giveWorkspaceToSandboxUser, UNDER_GVISOR } from '../../helpers/test-runtime.js';

const test = await requireDocker(anyTest, 'sandbox/disk-cap');
const MiB = 1024 * 1024;

const IN_FLIGHT = `python3 - <<'PY'
import array, os, socket
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
held = 0
# Written, not reserved: the sandbox refuses fallocate's reserving modes, and posix_fallocate's
# fallback (a byte per block) is a system call per 4 KiB, minutes under gVisor.
block = bytes(1 << 20)
try:
    for i in range(8):
        fd = os.open(f"held.{i}", os.O_RDWR | os.O_CREAT, 0o600)
        os.unlink(f"held.{i}")
        try:
            for _ in range(100):
                os.write(fd, block)
            held += 100
        finally:
            a.sendmsg([], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
            os.close(fd)
except OSError as e:
    print("stopped", e.strerror)
print("held", held, "MiB")
PY`;

/** dd of 128 MiB with fdatasync in the sandbox; returns dd's summary line. */
const DD = 'dd if=/dev/zero of=dd.bin bs=1M count=128 conv=fdatasync 2>&1 | tail -1; rm -f dd.bin';

test('on a capped workspace, commands cannot take more than the cap, even holding files only as descriptors in flight', async (t) => {
  if (process.getuid?.() !== 0) {
    await t.throwsAsync(createLoopImageCap({ image: '/nonexistent/x.img', mountPoint: '/nonexistent/x', limitBytes: 256 * MiB }), { message: /needs root/ });
    return;
  }
  const dir = await makeWorkspace(t, 'toolcell-cap-');
  const image = join(dir, 'workspace.img');
  const started = performance.now();
  const cap = await createLoopImageCap({ image, mountPoint: join(dir, 'ws'), limitBytes: 256 * MiB });
  const created = performance.now() - started;
  t.teardown(() => cap.release());
  await giveWorkspaceToSandboxUser(cap.root);
  t.true(cap.limitBytes <= 256 * MiB && cap.limitBytes > 200 * MiB, `the bound is the image size (${cap.limitBytes})`);

  await using backend = await createTestBackend({ warmPool: 0, limits: { workspaceGrowthBytes: 0, workspaceGrowthFiles: 0 } });
  const session = await backend.openSession({ sessionId: 'capped', workspaceRoot: cap.root });
  t.teardown(() => session.close());
  const attack = await runCommand(session, IN_FLIGHT, { mode: 'pipes' });
  const held = Number(/held (\d+) MiB/.exec(attack.stdout)?.[1]);
  if (UNDER_GVISOR) {
    // gVisor caches what a command writes to a file (here: unlinked, in flight) in its own memory before the host's
    // disk sees it: the cap bounds the disk (below), the memory limit (1 GiB) what gVisor holds beyond it.
    t.true(held <= 1024, `held ${held} MiB, within the session's memory limit`);
  } else {
    t.regex(attack.stdout, /stopped No space left on device/, attack.stdout + attack.stderr);
    t.true(held <= 256, `held ${held} MiB in flight on a 256 MiB workspace`);
  }
  const onDisk = (await stat(image)).blocks * 512;
  t.true(onDisk <= 256 * MiB, `the image takes ${onDisk} bytes of the host's disk`);
  t.is((await runCommand(session, 'echo alive', { mode: 'pipes' })).stdout, 'alive\n', 'the session goes on');

  // What it costs: a capped workspace beside a plain host folder, in the same run.
  const capped = (await runCommand(session, DD, { mode: 'pipes' })).stdout.trim();
  const plainSession = await backend.openSession({ sessionId: 'plain', workspaceRoot: await makeWorkspace(t, 'toolcell-plain-') });
  t.teardown(() => plainSession.close());
  const plain = (await runCommand(plainSession, DD, { mode: 'pipes' })).stdout.trim();
  // The control: the same attack on a plain host folder, counting off too, holds all 800 MiB.
  const unbounded = await runCommand(plainSession, IN_FLIGHT, { mode: 'pipes' });
  t.regex(unbounded.stdout, /held 800 MiB/, 'without the cap nothing stops it (what the cap is for)');
  await session.close();
  await cap.release();
  const again = performance.now();
  const remounted = await createLoopImageCap({ image, mountPoint: join(dir, 'ws'), limitBytes: 256 * MiB });
  const mounted = performance.now() - again;
  await remounted.release();
  t.log(`create+format+mount ${created.toFixed(0)} ms, mount of an existing image ${mounted.toFixed(0)} ms`);
  t.log(`128 MiB with fdatasync: capped ${capped} | plain ${plain}`);
  t.regex(capped, /copied/);
});

anyTest('bad loop image options are refused naming the field, before anything is created', async (t) => {
  await t.throwsAsync(createLoopImageCap({ image: '/nonexistent/x.img', mountPoint: '/nonexistent/x', limitBytes: 1024 }), {
    instanceOf: RangeError,
    message: 'createLoopImageCap: options.limitBytes must be an integer of at least 16 MiB',
  });
  await t.throwsAsync(createLoopImageCap({ image: '/nonexistent/x.img', mountPoint: '/nonexistent/x', limitBytes: 256 * MiB, files: 2 }), {
    instanceOf: RangeError,
    message: 'createLoopImageCap: options.files must be at least 16',
  });
});
