/**
 * A tenant's capped workspace across restarts and limit changes, with real
 * mounts, loop devices and Docker sessions: the same image and data again,
 * a crashed server's mount adopted, release freeing the loop device, the
 * cap grown and refused below usage.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDockerBackend } from '../../src/backends/docker/docker-backend.js';
import { requireDocker, runCommand, sessionId } from '../helpers/docker.js';
import { canMount, loopDevicesOf, makeDataDir, MiB, mountCount, TenantDisks, useTenantDisks } from '../helpers/tenant-disks.js';

const test = await requireDocker(anyTest, 'hosting/tenant-disks');
const execFileAsync = promisify(execFile);
const MODULE = fileURLToPath(new URL('../../src/hosting/tenants/disk/tenant-disks.js', import.meta.url));

/** A backend whose per-command growth counting is off: only the filesystem bounds the workspace. */
async function backend() {
  return createDockerBackend({ warmPool: 0, limits: { workspaceGrowthBytes: 0, workspaceGrowthFiles: 0 } });
}

test.serial('preparing a tenant again reuses the same image and data, in this process and after a restart', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  const first = await disks.prepare('acme', { diskBytes: 32 * MiB });
  const image = await stat(disks.imagePath('acme'));
  await using docker = await backend();
  const session = await docker.openSession({ sessionId: sessionId('reuse'), workspaceRoot: first.path });
  t.is((await runCommand(session, 'echo kept > note && cat note', { mode: 'pipes' })).stdout, 'kept\n');
  await session.close();

  const again = await disks.prepare('acme', { diskBytes: 32 * MiB });
  t.is(again.path, first.path);
  t.is(await mountCount(first.path), 1, 'one mount, shared by both holders');
  await first.release();
  await again.release();
  t.is(await mountCount(first.path), 0);

  const restarted = await TenantDisks.open({ dataDir: join(disks.imagesDir, '..') });
  t.teardown(() => restarted.releaseAll());
  const after = await restarted.prepare('acme', { diskBytes: 32 * MiB });
  t.is(after.path, first.path);
  t.is((await stat(restarted.imagePath('acme'))).ino, image.ino, 'the same image file');
  t.is(await readFile(join(after.path, 'note'), 'utf8'), 'kept\n');
});

test.serial('a workspace still mounted by a crashed server is adopted, not mounted twice', async (t) => {
  if (!canMount(t)) return;
  const dataDir = await makeDataDir(t);
  // A real server process prepares the workspace, writes, and dies by SIGKILL without releasing.
  const script = `import { TenantDisks } from ${JSON.stringify(MODULE)};
    import { writeFileSync } from 'node:fs';
    const disks = await TenantDisks.open({ dataDir: ${JSON.stringify(dataDir)} });
    const ws = await disks.prepare('acme', { diskBytes: 32 * 1024 * 1024 });
    writeFileSync(ws.path + '/before-crash', 'x');
    console.log('ready');
    setInterval(() => {}, 1000);`;
  const server = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('ready') ? resolve() : undefined));
    server.on('exit', (code) => reject(new Error(`the server exited early (${code})`)));
  });
  server.kill('SIGKILL');
  await new Promise((resolve) => server.once('exit', resolve));

  const disks = await TenantDisks.open({ dataDir });
  t.teardown(() => disks.releaseAll());
  const path = disks.workspacePath('acme');
  t.is(await mountCount(path), 1, 'the crashed server left its mount');
  const workspace = await disks.prepare('acme', { diskBytes: 32 * MiB });
  t.is(await mountCount(path), 1, 'adopted: still one mount');
  t.is((await loopDevicesOf(disks.imagePath('acme'))).length, 1, 'still one loop device');
  t.is(await readFile(join(workspace.path, 'before-crash'), 'utf8'), 'x');
  await using docker = await backend();
  const session = await docker.openSession({ sessionId: sessionId('adopt'), workspaceRoot: workspace.path });
  t.is((await runCommand(session, 'cat before-crash', { mode: 'pipes' })).stdout, 'x');
  await session.close();
  await workspace.release();
  t.is(await mountCount(path), 0);

  const other = disks.workspacePath('other');
  await mkdir(other, { recursive: true });
  await execFileAsync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', other]);
  t.teardown(() => execFileAsync('umount', [other]));
  await t.throwsAsync(disks.prepare('other', { diskBytes: 32 * MiB }), { code: 'disk_cap_failed', message: /another filesystem mounted/ });
  t.is(await mountCount(other), 1, 'the tmpfs alone');
});

test.serial('release unmounts when the last holder lets go, and frees the loop device', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  const one = await disks.prepare('acme', { diskBytes: 32 * MiB });
  const two = await disks.prepare('acme');
  const image = disks.imagePath('acme');
  await using docker = await backend();
  const session = await docker.openSession({ sessionId: sessionId('release'), workspaceRoot: one.path });
  t.is((await runCommand(session, 'echo hi > f', { mode: 'pipes' })).status.exitCode, 0);
  await session.close();

  await one.release();
  await one.release(); // idempotent: does not take the other holder's count
  t.is(await mountCount(one.path), 1, 'the other holder keeps it mounted');
  const device = (await stat(one.path)).dev;
  await two.release();
  t.is(await mountCount(one.path), 0, 'unmounted');
  t.deepEqual(await loopDevicesOf(image), [], 'loop device freed');

  // Mounted again, on the same loop device when it is still free: the backend that pinned the folder opens a session in it.
  const three = await disks.prepare('acme');
  t.teardown(() => three.release());
  if ((await stat(three.path)).dev !== device) t.log('the loop device was taken meanwhile; the folder got another device number');
  else {
    const next = await docker.openSession({ sessionId: sessionId('remount'), workspaceRoot: three.path });
    t.is((await runCommand(next, 'cat f', { mode: 'pipes' })).stdout, 'hi\n');
    await next.close();
  }
});

test.serial('raising diskBytes grows the filesystem, keeping the data; sessions then write past the old cap', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  const workspace = await disks.prepare('acme', { diskBytes: 32 * MiB });
  const small = workspace.limitBytes ?? 0;
  const device = (await stat(workspace.path)).dev;
  await using docker = await backend();
  const filling = await docker.openSession({ sessionId: sessionId('grow'), workspaceRoot: workspace.path });
  const full = await runCommand(filling, 'dd if=/dev/zero of=fill bs=1M count=64 2>&1; echo kept > note', { mode: 'pipes' });
  t.regex(full.stdout, /No space left on device/);

  // While a container holds it: grown in place where the server may (CAP_SYS_RESOURCE), else kept until it is free.
  const during = await disks.prepare('acme', { diskBytes: 96 * MiB });
  t.true(during.limitBytes === small || (during.limitBytes ?? 0) > 64 * MiB, `limit ${during.limitBytes}`);
  await filling.close();
  const after = await disks.prepare('acme', { diskBytes: 96 * MiB });
  t.true((after.limitBytes ?? 0) > 64 * MiB, `grown to ${after.limitBytes}`);
  t.is((await stat(join(after.path, 'fill'))).size > 16 * MiB, true, 'the data is still there');
  // The same device number: a running sandbox backend checks the workspace by it, and opens the next session.
  t.is((await stat(after.path)).dev, device, 'the same loop device');

  const writing = await docker.openSession({ sessionId: sessionId('grown'), workspaceRoot: after.path });
  const more = await runCommand(writing, 'rm -f note && dd if=/dev/zero of=more bs=1M count=40 2>&1 && echo wrote', { mode: 'pipes' });
  t.regex(more.stdout, /wrote/, more.stdout);
  await writing.close();
  for (const handle of [workspace, during, after]) await handle.release();
});

test.serial('lowering diskBytes below what is used is refused with a clear error and changes nothing; above it, it shrinks', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  const workspace = await disks.prepare('acme', { diskBytes: 64 * MiB });
  await writeFile(join(workspace.path, 'data'), Buffer.alloc(40 * MiB, 1));
  const before = workspace.limitBytes;
  const refused = await t.throwsAsync(disks.prepare('acme', { diskBytes: 32 * MiB }));
  t.is((refused as { code?: string }).code, 'disk_limit_below_usage');
  t.regex(refused?.message ?? '', /Tenant "acme": Cannot lower the disk cap to 33554432 bytes: \d+ bytes are in use/);
  t.is(workspace.limitBytes, before, 'the cap is unchanged');
  t.is((await stat(disks.imagePath('acme'))).size, 64 * MiB, 'the image is unchanged');
  t.is((await stat(join(workspace.path, 'data'))).size, 40 * MiB, 'the data is intact');
  t.is(await mountCount(workspace.path), 1, 'still mounted');

  // Also at the first mount after a restart: refused, and nothing left mounted.
  await workspace.release();
  const restarted = await TenantDisks.open({ dataDir: join(disks.imagesDir, '..') });
  t.teardown(() => restarted.releaseAll());
  await t.throwsAsync(restarted.prepare('acme', { diskBytes: 32 * MiB }), { code: 'disk_limit_below_usage' });
  t.is(await mountCount(workspace.path), 0);

  const mounted = await restarted.prepare('acme');
  await writeFile(join(mounted.path, 'data'), 'small now');
  const shrunk = await restarted.prepare('acme', { diskBytes: 32 * MiB });
  t.true((shrunk.limitBytes ?? 0) < 32 * MiB && (shrunk.limitBytes ?? 0) > 16 * MiB, `shrunk to ${shrunk.limitBytes}`);
  t.is(await readFile(join(shrunk.path, 'data'), 'utf8'), 'small now');
});

/** A process in a mount namespace of its own, copied from this one (unshare's default propagation is private): it holds every mount it copied. */
async function holdMountsFor(t: ExecutionContext, seconds: number, path: string): Promise<ChildProcess> {
  const holder = spawn('unshare', ['--mount', 'sleep', String(seconds)], { stdio: 'ignore' });
  t.teardown(() => holder.kill('SIGKILL'));
  // Until its copy of the mount table has `path` (unshare has run).
  for (;;) {
    const table = await readFile(`/proc/${holder.pid}/mountinfo`, 'utf8').catch(() => '');
    if (table.split('\n').some((line) => line.split(' ')[4] === path)) break;
    if (holder.exitCode !== null) throw new Error('unshare ended before it held the mounts');
    await sleep(10);
  }
  return holder;
}

test.serial(
  'a shrink waits out another mount namespace that holds the workspace for a moment (a sandbox starting elsewhere); one that keeps holding it leaves the cap as it was',
  async (t) => {
    if (!canMount(t)) return;
    const disks = await useTenantDisks(t);
    const workspace = await disks.prepare('acme', { diskBytes: 64 * MiB });
    await writeFile(join(workspace.path, 'data'), 'small');

    // runc and bwrap copy every mount of the host into the namespace they make, and drop them once their root is set up.
    const brief = await holdMountsFor(t, 0.5, workspace.path);
    const shrunk = await disks.prepare('acme', { diskBytes: 32 * MiB });
    t.true((shrunk.limitBytes ?? 0) < 32 * MiB, `shrunk to ${shrunk.limitBytes}`);
    t.not(brief.exitCode, null, 'applied once the holder had let go');

    // A holder that stays (a running container of this tenant's): the old cap is kept, the data and the mount stay.
    const lasting = await holdMountsFor(t, 60, workspace.path);
    const kept = await disks.prepare('acme', { diskBytes: 24 * MiB });
    t.is(kept.limitBytes, shrunk.limitBytes, 'the cap is unchanged while held');
    t.is(await readFile(join(kept.path, 'data'), 'utf8'), 'small');
    t.is(await mountCount(kept.path), 1);
    lasting.kill('SIGKILL');
    await once(lasting, 'exit');
    const applied = await disks.prepare('acme', { diskBytes: 24 * MiB });
    t.true((applied.limitBytes ?? 0) < 24 * MiB, `applied at the next prepare: ${applied.limitBytes}`);
    t.is(await readFile(join(applied.path, 'data'), 'utf8'), 'small');
    for (const handle of [workspace, shrunk, kept, applied]) await handle.release();
  },
);

test.serial(
  'a shrink goes through on a host that starts sandboxes all the time: a copy taken between the wait and the unmount is waited out too',
  async (t) => {
    if (!canMount(t)) return;
    const disks = await useTenantDisks(t);
    const workspace = await disks.prepare('acme', { diskBytes: 64 * MiB });
    await writeFile(join(workspace.path, 'data'), 'small');
    // A namespace copy of every mount, held 30 ms of every 40 ms, as a busy host's sandbox starts do:
    // one often lands between the moment none is seen and the unmount.
    const churn = spawn('bash', ['-c', 'while :; do unshare --mount sleep 0.03 & sleep 0.04; done'], { stdio: 'ignore', detached: true });
    t.teardown(() => {
      try {
        process.kill(-churn.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    });
    const shrunk = await disks.prepare('acme', { diskBytes: 32 * MiB });
    process.kill(-churn.pid!, 'SIGKILL');
    t.true((shrunk.limitBytes ?? 0) < 32 * MiB, `shrunk to ${shrunk.limitBytes}`);
    t.is(await readFile(join(shrunk.path, 'data'), 'utf8'), 'small');
    t.is(await mountCount(shrunk.path), 1);
    for (const handle of [workspace, shrunk]) await handle.release();
  },
);

test.serial('a workspace folder that already holds another filesystem or files is never mounted over', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  const path = disks.workspacePath('acme');
  await mkdir(path, { recursive: true });
  await writeFile(join(path, 'precious'), 'x');
  await t.throwsAsync(disks.prepare('acme', { diskBytes: 32 * MiB }), { code: 'disk_cap_failed', message: /not empty/ });
  t.is(await readFile(join(path, 'precious'), 'utf8'), 'x');
  t.is(await mountCount(path), 0);

  const other = disks.workspacePath('other');
  await mkdir(other, { recursive: true });
  await execFileAsync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', other]);
  t.teardown(() => execFileAsync('umount', [other]));
  await t.throwsAsync(disks.prepare('other', { diskBytes: 32 * MiB }), { code: 'disk_cap_failed', message: /another filesystem mounted/ });
  t.is(await mountCount(other), 1, 'the tmpfs alone');
});

test.serial('a cap too small to hold a filesystem is refused, naming the option', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  await t.throwsAsync(disks.prepare('acme', { diskBytes: 1024 }), {
    instanceOf: RangeError,
    message: /TenantDisks\.prepare: options\.diskBytes must be at least 16777216/,
  });
  await t.throwsAsync(disks.prepare('acme', { diskBytes: 32 * MiB + 0.5 }), { instanceOf: TypeError, message: /options\.diskBytes must be an integer/ });
  t.is(await mountCount(disks.workspacePath('acme')), 0);
});
