/**
 * The sandbox shows no host or other-tenant state (hardening.ts,
 * MASKED_PATHS; SECURITY.md, "What a command can learn", has the review of
 * /proc and /sys these attacks come from). Another tenant's disk is
 * mounted from a loop device, as on a hosting server; from a session a
 * command then searches /sys and /proc for its image's path and looks at
 * every inventory that names block devices, filesystems, locks, key
 * holders or the machine. Commands of a root-owned workspace run as uid 0
 * (the suite's default as root), which also reads root-only kernel files:
 * heap and page state, and zram's hot_add, whose read alone creates a
 * block device on the host.
 */
import anyTest from 'ava';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, commandProcesses, makeTempDir } from '../helpers/security.js';
import { MiB, TenantDisks, canMount } from '../helpers/tenant-disks.js';

const docker = await requireDocker(anyTest, 'security/host-state');
const test = docker.serial;

let session: SandboxSession;
let containerId: string;

docker.before(async () => {
  session = await SandboxSession.open({ timeoutSeconds: 60 });
  [containerId = ''] = await session.containerIds();
});
docker.after.always(async () => {
  await session?.close();
});

async function assertContained(t: import('ava').ExecutionContext, label: string): Promise<void> {
  t.deepEqual(await commandProcesses(containerId), [], `${label}: no process of the call may survive`);
  await session.assertAlive(t, `${label}: next call`);
}

/** The lines a command printed, without empty ones. */
function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

test("another tenant's disk is nowhere in /sys or /proc: no loop device's backing file, size or I/O, no per-filesystem state", async (t) => {
  if (!canMount(t)) return;
  const dataDir = await makeTempDir(t, 'toolcell-sec-victim-');
  const disks = await TenantDisks.open({ dataDir });
  t.teardown(() => disks.releaseAll());
  const victim = await disks.prepare('victim', { diskBytes: 16 * MiB });
  await writeFile(join(victim.path, 'secret.txt'), 'victim data\n');
  const image = disks.imagePath('victim');
  // A search of the whole of /sys, and of /proc but the processes (its own), for the image's folder;
  // hot_add is never read here (see the zram test).
  const search = await session.shell(
    `{ grep -r -l -F --exclude=hot_add -D skip -e '${dataDir}' -e '.ext4' /sys; for f in /proc/*; do [ -f "$f" ] && grep -l -F -e '${dataDir}' -e '.ext4' "$f"; done; grep -r -l -F -e '${dataDir}' -e '.ext4' /proc/fs /proc/sys/fs; } 2>/dev/null | sed 's/^/FOUND /'; echo searched`,
  );
  t.regex(search.output, /searched/);
  t.deepEqual(
    lines(search.output).filter((line) => line.startsWith('FOUND')),
    [],
    `${image} (or any disk image) is named in these files`,
  );
  const listed = await session.shell(
    'for d in /sys/block /sys/class/block /sys/dev/block /sys/devices/virtual/block /sys/class/bdi /sys/devices/virtual/bdi /sys/fs/ext4 /sys/fs/btrfs /sys/fs/xfs /proc/fs; do ls -A "$d" 2>/dev/null | sed "s|^|$d: |"; done; cat /sys/block/*/loop/backing_file /sys/block/*/size 2>/dev/null | sed "s/^/read: /"; echo listed',
  );
  t.regex(listed.output, /listed/);
  t.deepEqual(
    lines(listed.output).filter((line) => line !== 'listed'),
    [],
    'block devices, their backing files and sizes, and per-filesystem state are hidden',
  );
  await assertContained(t, 'disk search');
});

test('inventories of the host are empty: disk I/O, partitions, swap, file locks, key holders', async (t) => {
  const outcome = await session.shell(
    'for f in /proc/diskstats /proc/partitions /proc/swaps /proc/locks /proc/key-users; do printf "%s %s\\n" "$f" "$(wc -c < "$f" 2>/dev/null || echo absent)"; done',
  );
  const sizes = Object.fromEntries(lines(outcome.output).map((line) => line.split(' ') as [string, string]));
  for (const file of ['/proc/diskstats', '/proc/partitions', '/proc/swaps', '/proc/locks', '/proc/key-users']) {
    t.true(sizes[file] === '0' || sizes[file] === 'absent', `${file} shows ${sizes[file]} bytes`);
  }
  await assertContained(t, 'inventories');
});

test("the machine's identity is hidden: DMI serials and UUIDs, the crash-dump note's address, the boot command line", async (t) => {
  const outcome = await session.shell(
    'for d in /sys/class/dmi /sys/devices/virtual/dmi; do ls -A "$d" 2>/dev/null | sed "s|^|$d: |"; done; for f in /sys/kernel/vmcoreinfo /proc/cmdline /proc/bootconfig; do [ -s "$f" ] && echo "readable: $f"; done; echo checked',
  );
  t.deepEqual(lines(outcome.output), ['checked']);
  await assertContained(t, 'identity');
});

test("root-only kernel state is hidden even from a uid-0 command: heap and page state, memory monitoring, and zram's hot_add, which creates a host device when read", async (t) => {
  const zram = async (): Promise<string[]> => (await readdir('/sys/block').catch(() => [] as string[])).filter((name) => name.startsWith('zram'));
  const before = await zram();
  t.teardown(async () => {
    // A read that went through made a device on the host: remove it again (it is unused).
    for (const device of (await zram()).filter((name) => !before.includes(name))) {
      await writeFile('/sys/class/zram-control/hot_remove', device.slice('zram'.length)).catch(() => {});
    }
  });
  const outcome = await session.shell(
    [
      'id -u | sed "s/^/uid=/"',
      'for f in /proc/slabinfo /proc/pagetypeinfo /proc/vmallocinfo /proc/kpageflags /proc/kpagecount /proc/kpagecgroup; do [ -s "$f" ] && head -c 1 "$f" >/dev/null 2>&1 && echo "readable: $f"; done',
      'for d in /sys/kernel/slab /sys/kernel/mm/damon /sys/class/zram-control; do ls -A "$d" 2>/dev/null | sed "s|^|$d: |"; done',
      'cat /sys/class/zram-control/hot_add 2>/dev/null | sed "s/^/made zram/"',
      'echo checked',
    ].join('; '),
  );
  t.deepEqual(
    lines(outcome.output).filter((line) => !line.startsWith('uid=')),
    ['checked'],
  );
  t.deepEqual(await zram(), before, 'no zram device appeared on the host');
  await assertContained(t, 'root-only state');
});
