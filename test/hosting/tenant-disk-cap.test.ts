/**
 * The tenant's disk cap is hard and the tenant's alone: real containers of
 * one tenant filling its workspace together get ENOSPC at the cap, while
 * another tenant and the host write on; the image that holds the workspace
 * cannot be reached from it; hostile tenant names stay inside the data
 * directory.
 */
import anyTest from 'ava';
import { lstat, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { createDockerBackend } from '../../src/backends/docker/docker-backend.js';
import { openConfinedFile } from '../../src/fs/safe-open.js';
import { resolveWorkspacePath } from '../../src/fs/workspace-paths.js';
import { writeFileAtomic } from '../../src/fs/atomic-write.js';
import { requireDocker, runCommand, sessionId } from '../helpers/docker.js';
import { canMount, MiB, mountCount, useTenantDisks } from '../helpers/tenant-disks.js';

const test = await requireDocker(anyTest, 'hosting/tenant-disk-cap');

/** Writes up to `mib` MiB into `name`, then prints how it ended. */
const fill = (name: string, mib: number): string =>
  `dd if=/dev/zero of=${name} bs=1M count=${mib} conv=fsync 2>&1 | grep -o 'No space left on device' | head -1; echo done`;

async function duBytes(path: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(path, { recursive: true })) total += (await lstat(join(path, entry))).blocks * 512;
  return total;
}

test.serial('two sessions of one tenant together cannot exceed its cap; another tenant and the host write on', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  const a = await disks.prepare('tenant-a', { diskBytes: 48 * MiB });
  const b = await disks.prepare('tenant-b', { diskBytes: 48 * MiB });
  const cap = a.limitBytes ?? 0;
  await using docker = await createDockerBackend({ warmPool: 0, limits: { workspaceGrowthBytes: 0, workspaceGrowthFiles: 0 } });
  const [a1, a2, b1] = await Promise.all([
    docker.openSession({ sessionId: sessionId('a1'), workspaceRoot: a.path }),
    docker.openSession({ sessionId: sessionId('a2'), workspaceRoot: a.path }),
    docker.openSession({ sessionId: sessionId('b1'), workspaceRoot: b.path }),
  ]);
  t.teardown(() => Promise.all([a1.close(), a2.close(), b1.close()]));

  // Each alone would stay under the cap (40 MiB of 48); together they run into it.
  const [one, two] = await Promise.all([runCommand(a1, fill('one', 40), { mode: 'pipes' }), runCommand(a2, fill('two', 40), { mode: 'pipes' })]);
  // What the cap guarantees, checked once both writers have exited (each
  // printed `done`) and their data is on disk (conv=fsync, then sync): the
  // cap, not the 80 MiB asked for, stopped them, and what the tenant holds is
  // within it. How much room ext4 still reports free after an ENOSPC moves
  // with delayed allocation and reservations, so it is not asserted.
  t.regex(one.stdout, /done\n$/, 'the first writer exited');
  t.regex(two.stdout, /done\n$/, 'the second writer exited');
  t.regex(one.stdout + two.stdout, /No space left on device/, 'a container of the tenant filling its disk gets ENOSPC');
  const sizes = await runCommand(a1, 'sync && stat -c %s one two', { mode: 'pipes' });
  const writtenBytes = sizes.stdout
    .trim()
    .split('\n')
    .reduce((sum, size) => sum + Number(size), 0);
  t.true(writtenBytes < 80 * MiB, `the writers were cut short (${writtenBytes} bytes of ${80 * MiB} asked)`);
  t.true(writtenBytes <= cap, `the tenant's files hold ${writtenBytes} bytes, cap ${cap}`);
  t.true((await duBytes(a.path)) <= cap, `the tenant holds at most its cap on disk`);
  // Full: another whole cap's worth is refused too, and still nothing passes the cap.
  const third = await runCommand(a2, fill('three', 48), { mode: 'pipes' });
  t.regex(third.stdout, /No space left on device\ndone\n$/, 'a third write into the full tenant gets ENOSPC');
  const used = await duBytes(a.path);
  t.true(used <= cap, `the tenant holds ${used} bytes, cap ${cap}`);
  t.true((await stat(disks.imagePath('tenant-a'))).blocks * 512 <= 48 * MiB, "the image takes no more of the host's disk than the cap");

  const other = await runCommand(b1, `${fill('b', 32)}; ls -l b | cut -d' ' -f5`, { mode: 'pipes' });
  t.is(other.stdout, `done\n${32 * MiB}\n`, 'the other tenant writes its 32 MiB');
  const hostFile = join(dirname(disks.imagesDir), 'host-file');
  await writeFile(hostFile, Buffer.alloc(64 * MiB));
  t.is((await stat(hostFile)).size, 64 * MiB, 'the host writes past the tenant cap');
  await rm(hostFile);
  t.is((await runCommand(a1, 'rm -f one two three && echo freed', { mode: 'pipes' })).stdout, 'freed\n', 'the full tenant goes on once it frees space');
});

test.serial('a tenant cannot reach its disk image through a symlink; images live outside every workspace', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  const workspace = await disks.prepare('tenant-a', { diskBytes: 32 * MiB });
  const image = disks.imagePath('tenant-a');
  t.true(relative(disks.workspacesDir, image).startsWith('..'), 'the image is outside the workspaces folder');
  t.is((await stat(disks.imagesDir)).mode & 0o777, 0o700, 'the images folder is root-only');
  t.is((await stat(image)).mode & 0o777, 0o600, 'the image is root-only');

  await using docker = await createDockerBackend({ warmPool: 0 });
  const session = await docker.openSession({ sessionId: sessionId('link'), workspaceRoot: workspace.path });
  t.teardown(() => session.close());
  const planted = await runCommand(
    session,
    `ln -s ${image} image && ln -s ../../disk-images images && ln -s .. up; cat image >/dev/null 2>&1 && echo read-image; ls images/ 2>/dev/null | grep -c ext4; ls up/ | grep -c disk-images`,
    { mode: 'pipes' },
  );
  t.is(planted.stdout, '0\n0\n', `inside the container the links lead nowhere: ${planted.stdout}${planted.stderr}`);

  // The host-side file tools' own checks refuse every link (read and write).
  const info = { roots: [workspace.path], stateDir: join(workspace.path, '.toolcell') };
  for (const link of ['image', `images/${basename(image)}`, 'up', 'up/x']) {
    await t.throwsAsync(resolveWorkspacePath(info, link), { code: 'path_not_in_workspace' }, link);
  }
  await t.throwsAsync(openConfinedFile(info, join(workspace.path, 'image')), { code: 'path_not_in_workspace' });
  // A write replaces the link itself (temp file + rename), never what it points at.
  await writeFileAtomic(info, join(workspace.path, 'image'), 'overwrite');
  t.true((await lstat(join(workspace.path, 'image'))).isFile(), 'the link was replaced by a file');
  t.is((await stat(image)).size, 32 * MiB, 'the image is untouched');
  t.is(await mountCount(workspace.path), 1, 'and still mounted');
});

test.serial('a malicious tenant name cannot place an image or a mount outside the data directory', async (t) => {
  if (!canMount(t)) return;
  const disks = await useTenantDisks(t);
  const dataDir = dirname(disks.imagesDir);
  const names = ['../../../../tmp/evil', '/etc', '..', 'a/../../b\n$(touch /tmp/pwned)'];
  const handles = [];
  for (const name of names) handles.push(await disks.prepare(name, { diskBytes: 16 * MiB }));
  for (const [index, handle] of handles.entries()) {
    t.is(dirname(handle.path), disks.workspacesDir, names[index]);
    t.is(dirname(disks.imagePath(names[index]!)), disks.imagesDir);
    t.is(await mountCount(handle.path), 1);
  }
  t.deepEqual((await readdir(dataDir)).sort(), ['disk-images', 'workspaces']);
  t.is((await readdir(disks.imagesDir)).length, names.length);
  t.is((await readdir(disks.workspacesDir)).length, names.length);
  await t.throwsAsync(stat('/tmp/pwned'));
  await t.throwsAsync(stat('/tmp/evil'));
  await t.throwsAsync(disks.prepare('', { diskBytes: 16 * MiB }), { instanceOf: TypeError });
});
