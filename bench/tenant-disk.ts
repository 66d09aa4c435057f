/**
 * bench/tenant-disk: what a hard disk cap per tenant costs (an ext4 image
 * per tenant, mounted through a loop device: src/hosting/tenants/disk/), against
 * baselines measured in the same run on the same host filesystem. Prints
 * figures and ratios; asserts nothing. Needs root.
 *
 *   create      a new tenant's volume (sparse file, mkfs.ext4, mount) vs an
 *               uncapped workspace (mkdir) and a host process (`bash -c true`)
 *   remount     mounting an existing image at restart; adopting a mount a
 *               crashed server left; release (unmount, loop device freed)
 *   write       128 MiB with fdatasync, and 2,000 files of 4 KiB, inside a
 *               cap vs a plain folder on the host filesystem, interleaved
 *               (large writes also through a loop device without direct I/O)
 *   overhead    host disk an empty volume takes, the part of the cap ext4
 *               keeps for itself, one loop device per mounted tenant
 *   the other   whether XFS and ext4 project quotas work on this kernel
 *   option
 *
 *   npm run bench:tenant-disk -- [--tenants N] [--disk-mib N] [--rounds N]
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, open, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import { loopDevicesOf } from '../src/backends/docker/disk-cap/mount-table.js';
import { TenantDisks, type TenantWorkspace } from '../src/hosting/tenants/disk/tenant-disks.js';
import { hostSpawnTrue } from './host-spawn.js';
import { fmt, percentile, sortNumbers } from './stats.js';
import { timeEach } from './timing.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const { values } = parseArgs({
  options: {
    tenants: { type: 'string', default: '8' },
    'disk-mib': { type: 'string', default: '256' },
    rounds: { type: 'string', default: '6' },
  },
});
const tenants = Number(values.tenants);
const diskBytes = Number(values['disk-mib']) * MiB;
const rounds = Number(values.rounds);

const median = (samples: number[]): number => percentile(sortNumbers(samples), 50);
const ratio = (value: number, base: number): string => `${(value / base).toFixed(1)}×`;

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const result = await work();
  return [result, performance.now() - start];
}

/** Sequential 1 MiB writes then fdatasync; MB/s. */
async function writeBig(dir: string, bytes: number): Promise<number> {
  const path = join(dir, 'big.bin');
  const chunk = Buffer.alloc(MiB, 7);
  const start = performance.now();
  const handle = await open(path, 'w');
  for (let written = 0; written < bytes; written += MiB) await handle.write(chunk);
  await handle.datasync();
  await handle.close();
  const seconds = (performance.now() - start) / 1000;
  await rm(path);
  return bytes / 1e6 / seconds;
}

/** 2,000 files of 4 KiB, then a sync of the folder's filesystem; files/s. */
async function writeSmall(dir: string): Promise<number> {
  const folder = join(dir, 'small');
  await mkdir(folder);
  const data = Buffer.alloc(4096, 3);
  const start = performance.now();
  for (let i = 0; i < 2000; i++) {
    const handle = await open(join(folder, `f${i}`), 'w');
    await handle.write(data);
    await handle.close();
  }
  await run('sync', ['-f', folder]);
  const seconds = (performance.now() - start) / 1000;
  await rm(folder, { recursive: true });
  return 2000 / seconds;
}

/** Tries one project-quota alternative on a scratch image; returns how it went. */
async function tryQuota(dir: string, name: string, mkfs: string[], options: string): Promise<string> {
  const image = join(dir, `${name}.img`);
  const mountPoint = join(dir, name);
  await mkdir(mountPoint);
  try {
    // 320 MiB: mkfs.xfs refuses filesystems under 300 MB.
    const handle = await open(image, 'w');
    await handle.truncate(320 * MiB);
    await handle.close();
    await run(mkfs[0]!, [...mkfs.slice(1), image]);
  } catch (error) {
    return `not tried: ${(error as { code?: string }).code === 'ENOENT' ? `${mkfs[0]} is not installed` : String(error).split('\n')[0]}`;
  }
  try {
    const [, ms] = await timed(() => run('mount', ['-o', `loop,${options}`, image, mountPoint]));
    await run('umount', [mountPoint]);
    return `mounts with ${options} (${fmt(ms)}): available`;
  } catch {
    const dmesg = await run('dmesg').then(
      ({ stdout }) =>
        stdout
          .trim()
          .split('\n')
          .at(-1)
          ?.replace(/^\[[^\]]*\]\s*/, '') ?? '',
      () => '',
    );
    return `refused by the kernel (${dmesg || 'mount failed'})`;
  } finally {
    await rm(image, { force: true });
  }
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench:tenant-disk mounts filesystems: run it as root');
  const dataDir = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-bench-tenants-')));
  const names = Array.from({ length: tenants }, (_, i) => `bench-tenant-${i}`);
  const opened: TenantDisks[] = [];
  const openDisks = async (): Promise<TenantDisks> => {
    const disks = await TenantDisks.open({ dataDir });
    opened.push(disks);
    return disks;
  };
  try {
    console.log(
      `bench/tenant-disk: ${tenants} tenants of ${diskBytes / MiB} MiB on ${dataDir} (${(await run('df', ['-T', dataDir])).stdout.split('\n')[1]?.split(/\s+/)[1]})`,
    );
    const spawnTrue = median(await timeEach(20, () => hostSpawnTrue(process.env)));
    const plainDirs = await timeEach(tenants, async () => mkdir(join(dataDir, `plain-${Math.random()}`)), 0);

    // create
    let disks = await openDisks();
    const created: number[] = [];
    const handles: TenantWorkspace[] = [];
    for (const name of names) {
      const [handle, ms] = await timed(() => disks.prepare(name, { diskBytes }));
      created.push(ms);
      handles.push(handle);
    }
    const limitBytes = handles[0]?.limitBytes ?? 0;
    const loops = (await Promise.all(names.map((name) => loopDevicesOf(disks.imagePath(name))))).flat().length;
    const hostBytes = (await stat(disks.imagePath(names[0]!))).blocks * 512;

    // write, interleaved: capped, plain, capped, plain…
    const plain = join(dataDir, 'plain-write');
    await mkdir(plain);
    // The second tenant's loop device without direct I/O: what toolcell's choice of it buys.
    const [buffered] = await loopDevicesOf(disks.imagePath(names[1] ?? names[0]!));
    await run('losetup', ['--direct-io=off', buffered!]);
    const big = { capped: [] as number[], buffered: [] as number[], plain: [] as number[] };
    const small = { capped: [] as number[], plain: [] as number[] };
    const contenders: [number[], () => Promise<number>][] = [
      [big.capped, () => writeBig(handles[0]!.path, 128 * MiB)],
      [big.buffered, () => writeBig(handles[1]?.path ?? handles[0]!.path, 128 * MiB)],
      [big.plain, () => writeBig(plain, 128 * MiB)],
      [small.capped, () => writeSmall(handles[0]!.path)],
      [small.plain, () => writeSmall(plain)],
    ];
    // Every other round in reverse order, so that whatever one run leaves behind (dirty pages) hits each alike.
    for (let round = 0; round < rounds; round++) {
      for (const [samples, write] of round % 2 === 0 ? contenders : [...contenders].reverse()) samples.push(await write());
    }

    // release, remount at restart, adopt after a crash
    const released: number[] = [];
    for (const handle of handles) released.push((await timed(() => handle.release()))[1]);
    const loopsAfter = (await Promise.all(names.map((name) => loopDevicesOf(disks.imagePath(name))))).flat().length;
    disks = await openDisks();
    const remounted: number[] = [];
    for (const name of names) remounted.push((await timed(() => disks.prepare(name, { diskBytes })))[1]);
    const crashed = await openDisks(); // the old instance "died" without releasing
    const adopted: number[] = [];
    for (const name of names) adopted.push((await timed(() => crashed.prepare(name, { diskBytes })))[1]);
    await crashed.releaseAll();
    await disks.releaseAll();

    const quotaDir = join(dataDir, 'quota');
    await mkdir(quotaDir);
    const xfs = await tryQuota(quotaDir, 'xfs', ['mkfs.xfs', '-q', '-f'], 'prjquota');
    const ext4 = await tryQuota(quotaDir, 'ext4', ['mkfs.ext4', '-q', '-F', '-O', 'quota,project'], 'prjquota');

    const c = median(created);
    const r = median(remounted);
    console.log(`
baselines (same run)      bash -c true ${fmt(spawnTrue)} · mkdir of an uncapped workspace ${fmt(median(plainDirs))}
create a tenant volume    ${fmt(c)} median (${ratio(c, spawnTrue)} a host process, ${ratio(c, median(plainDirs))} an uncapped mkdir), once per tenant
mount at restart          ${fmt(r)} median (${ratio(r, spawnTrue)} a host process)
adopt after a crash       ${fmt(median(adopted))} median (${ratio(median(adopted), spawnTrue)} a host process; no mount made)
release                   ${fmt(median(released))} median; loop devices attached before ${loops}, after ${loopsAfter}
write 128 MiB + fdatasync capped ${median(big.capped).toFixed(0)} MB/s vs plain ${median(big.plain).toFixed(0)} MB/s: ${(median(big.capped) / median(big.plain)).toFixed(2)} of the host's
                          (a loop device without direct I/O: ${median(big.buffered).toFixed(0)} MB/s, ${(median(big.buffered) / median(big.plain)).toFixed(2)})
write 2,000 × 4 KiB + sync capped ${median(small.capped).toFixed(0)} files/s vs plain ${median(small.plain).toFixed(0)} files/s: ${(median(small.capped) / median(small.plain)).toFixed(2)} of the host's
overhead per tenant       host disk of an empty volume ${(hostBytes / MiB).toFixed(1)} MiB (${((hostBytes / diskBytes) * 100).toFixed(1)}% of its cap, sparse);
                          usable ${(limitBytes / MiB).toFixed(1)} of ${diskBytes / MiB} MiB (${((1 - limitBytes / diskBytes) * 100).toFixed(1)}% kept by ext4: journal, inode tables);
                          one loop device and one mount per tenant with a live session
XFS project quotas        ${xfs}
ext4 project quotas       ${ext4}`);
  } finally {
    for (const disks of opened) await disks.releaseAll().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
