import { execFile } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { mkdir, open, readFile, readdir, rmdir, stat, statfs, truncate } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { z } from 'zod';
import { parseOptions } from '../../../contracts/parse-options.js';
import { ToolErrorType, ToolcellError, errorMessage } from '../../../errors.js';
import type { DiskCap, DiskUsage } from './disk-cap.js';
import { loopDevicesOf, mountsAt, namespacesHolding } from './mount-table.js';

const run = promisify(execFile);

/** Options of `createLoopImageCap`. */
export interface LoopImageCapOptions {
  /** The image file (created sparse when missing; kept, with its data, across releases). */
  image: string;
  /** Where the image is mounted: the bounded folder. Created when missing. Must be a real path. */
  mountPoint: string;
  /** Size of a new image. An existing image keeps its size (`resize` changes it). */
  limitBytes: number;
  /** Inodes of a new image (bounds the file count too). Default: one per 16 KiB. */
  files?: number;
  /**
   * A loop device to attach the image to when it is free: the one it had
   * before (`DiskCap.device`), so the folder keeps its device number across
   * a release and the next mount. Any free device otherwise.
   */
  device?: string;
}

const MiB = 1024 * 1024;
/** Below this mkfs.ext4 leaves too little room after its own metadata to be worth a workspace. */
export const MIN_LOOP_IMAGE_BYTES = 16 * MiB;
const MOUNT_OPTIONS = 'nosuid,nodev';

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function failed(step: string, error: unknown): ToolcellError {
  const detail = (error as { stderr?: string }).stderr?.trim() || errorMessage(error);
  return new ToolcellError(ToolErrorType.DISK_CAP_FAILED, `${step}: ${detail}`, { cause: error });
}

/** Waits (a little) for the kernel to detach a loop device whose last user went away. */
async function loopFreed(image: string, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if ((await loopDevicesOf(image)).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}

/**
 * Mounts `image` at `mountPoint`, reusing a loop device already attached to
 * it (never a second one), else attaching it to `preferred` when that device
 * is free, else to any free one.
 */
async function mountImage(image: string, mountPoint: string, preferred?: string): Promise<void> {
  let [attached] = await loopDevicesOf(image);
  if (attached === undefined && preferred !== undefined && (await loopIsFree(preferred))) {
    // Attached by hand, it detaches only by `losetup -d` (release does that), not at its last close.
    attached = await run('losetup', [preferred, image]).then(
      () => preferred,
      () => undefined, // taken meanwhile: any free device will do
    );
  }
  // A crashed host may have left the device attached (held by a container it
  // left running): mounting that device again shares its superblock, where a
  // second device on the same file would be a second writer on one filesystem.
  const args = attached === undefined ? ['-o', `loop,${MOUNT_OPTIONS}`, image, mountPoint] : ['-o', MOUNT_OPTIONS, attached, mountPoint];
  await run('mount', args).catch((error: unknown) => {
    throw failed(`mounting ${image} at ${mountPoint}`, error);
  });
  // Direct I/O from the loop device to the image: the data is cached once (in
  // the tenant's filesystem), not twice in the host's memory. Synced writes
  // with dd ran at 1.2-2.2 times the buffered device's speed in 8 of 8
  // alternating rounds here (the bench's figures on this loaded machine vary
  // more). The kernel keeps buffered I/O where the host filesystem cannot do
  // direct I/O, so a refusal is no error.
  const device = (await mountsAt(mountPoint)).at(-1)?.source;
  if (device?.startsWith('/dev/loop')) await run('losetup', ['--direct-io=on', device]).catch(() => undefined);
}

/** True when `device` is a loop device with no file attached. */
async function loopIsFree(device: string): Promise<boolean> {
  const name = /^\/dev\/(loop\d+)$/.exec(device)?.[1];
  if (name === undefined) return false;
  return readFile(`/sys/block/${name}/loop/backing_file`, 'utf8').then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === 'ENOENT' && existsSync(`/sys/block/${name}`),
  );
}

async function mountDevice(device: string, mountPoint: string): Promise<void> {
  await run('mount', ['-o', MOUNT_OPTIONS, device, mountPoint]).catch((error: unknown) => {
    throw failed(`mounting ${device} at ${mountPoint}`, error);
  });
}

/**
 * How long a resize that needs the filesystem unmounted waits for one other
 * mount namespace to let go of it. A sandbox starting anywhere on the host
 * (runc, bwrap) holds a copy of every mount for a moment, tens of ms when
 * quiet and more under load: a shrink asked for then would otherwise be put
 * off to the next prepare though no container of this tenant holds the
 * workspace. A running container holds it for good: the resize then costs
 * this wait before it is put off.
 */
const HOLDER_WAIT_MS = 3000;

/**
 * How long a resize keeps trying while the holders come and go: on a host
 * that starts sandboxes all the time each one is brief, but there may be no
 * moment without one, and one can take its copy between the moment none is
 * seen and the unmount (which is then undone and tried again).
 */
const PASSING_HOLDERS_WAIT_MS = 10_000;

/**
 * Waits, with the filesystem still mounted here, until no other mount
 * namespace holds it: true then; false when one namespace has held it for
 * HOLDER_WAIT_MS (a running container's) or `deadline` passed. Only a hint:
 * the exclusive open after the unmount decides.
 */
async function otherNamespacesLetGo(input: {
  deviceNumber: string | undefined;
  mountPoint: string;
  firstSeen: Map<string, number>;
  deadline: number;
}): Promise<boolean> {
  if (input.deviceNumber === undefined) return true;
  for (;;) {
    const holding = await namespacesHolding(input.deviceNumber, input.mountPoint);
    if (holding.size === 0) return true;
    const now = Date.now();
    for (const namespace of holding) if (!input.firstSeen.has(namespace)) input.firstSeen.set(namespace, now);
    const longest = Math.min(...[...holding].map((namespace) => input.firstSeen.get(namespace)!));
    if (now - longest >= HOLDER_WAIT_MS || now >= input.deadline) return false;
    await sleep(25);
  }
}

/** The loop device's number ("7:3", from /sys), or undefined when it cannot be read. */
async function loopDeviceNumber(device: string): Promise<string | undefined> {
  const name = /^\/dev\/(loop\d+)$/.exec(device)?.[1];
  return name === undefined ? undefined : (await readFile(`/sys/block/${name}/dev`, 'utf8').catch(() => undefined))?.trim();
}

/** True when no filesystem has the block device mounted anywhere (a mounted one is claimed exclusively: EBUSY). */
async function unclaimed(device: string): Promise<boolean> {
  try {
    await (await open(device, constants.O_RDONLY | constants.O_EXCL)).close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EBUSY') return false;
    throw error;
  }
}

async function unmount(mountPoint: string, { lazy }: { lazy: boolean }): Promise<void> {
  try {
    await run('umount', [mountPoint]);
  } catch (error) {
    if (!lazy || !/busy/i.test((error as { stderr?: string }).stderr ?? '')) throw failed(`unmounting ${mountPoint}`, error);
    // A host process still has a file open in it: detach now, free the device when it lets go.
    await run('umount', ['--lazy', mountPoint]);
  }
}

class LoopImageCap implements DiskCap {
  readonly root: string;
  readonly image: string;
  #limitBytes: number;
  #released = false;

  readonly device: string | undefined;

  constructor(image: string, root: string, limitBytes: number, device: string | undefined) {
    this.image = image;
    this.root = root;
    this.#limitBytes = limitBytes;
    this.device = device;
  }

  get limitBytes(): number {
    return this.#limitBytes;
  }

  async usage(): Promise<DiskUsage> {
    const fs = await statfs(this.root);
    return {
      usedBytes: (fs.blocks - fs.bfree) * fs.bsize,
      freeBytes: fs.bavail * fs.bsize,
      usedFiles: fs.files - fs.ffree,
      freeFiles: fs.ffree,
    };
  }

  async imageBytes(): Promise<number> {
    return (await stat(this.image)).size;
  }

  async resize(limitBytes: number): Promise<'done' | 'in_use'> {
    parseOptions(z.strictObject({ limitBytes: limitBytesOption }), { limitBytes }, 'LoopImageCap.resize');
    const current = await this.imageBytes();
    if (limitBytes === current) return 'done';
    if (limitBytes < current) await this.#checkFits(current, limitBytes);
    const outcome = limitBytes > current && (await canResizeOnline()) ? await this.#growOnline(limitBytes) : await this.#resizeOffline(limitBytes);
    this.#limitBytes = await measuredLimit(this.root);
    return outcome;
  }

  /** Lowering below what is used changes nothing and says so. */
  async #checkFits(current: number, limitBytes: number): Promise<void> {
    const { usedBytes } = await this.usage();
    // The filesystem's own metadata (journal, inode tables) stays about what it is now.
    const usable = limitBytes - (current - this.#limitBytes);
    if (usedBytes <= usable) return;
    throw new ToolcellError(
      ToolErrorType.DISK_LIMIT_BELOW_USAGE,
      `Cannot lower the disk cap to ${limitBytes} bytes: ${usedBytes} bytes are in use and would not fit (room for ${Math.max(0, usable)}); delete files first or keep a larger cap. Nothing was changed.`,
    );
  }

  /** ext4 grows while mounted and in use, so live sessions keep going; the kernel wants CAP_SYS_RESOURCE for it. */
  async #growOnline(limitBytes: number): Promise<'done'> {
    const device = (await mountsAt(this.root)).at(-1)?.source;
    if (device === undefined || !device.startsWith('/dev/loop'))
      throw failed(`growing ${this.image}`, new Error(`${this.root} is not mounted from a loop device`));
    try {
      await truncate(this.image, limitBytes);
      await run('losetup', ['--set-capacity', device]);
      await run('resize2fs', [device]);
    } catch (error) {
      throw failed(`growing ${this.image} to ${limitBytes} bytes`, error);
    }
    return 'done';
  }

  /**
   * Unmounted: how ext4 shrinks, and how it grows without CAP_SYS_RESOURCE.
   * When anything besides this mount still holds the filesystem (a
   * container's own view of it), resizing under it would corrupt it: the
   * mount is put back and 'in_use' returned, nothing changed. The loop
   * device stays attached throughout, so the remounted folder keeps its
   * device number, which a running sandbox backend checks the workspace by.
   */
  async #resizeOffline(limitBytes: number): Promise<'done' | 'in_use'> {
    const device = (await mountsAt(this.root)).at(-1)?.source;
    if (device === undefined || !device.startsWith('/dev/loop'))
      throw failed(`resizing ${this.image}`, new Error(`${this.root} is not mounted from a loop device`));
    const waiting = {
      deviceNumber: await loopDeviceNumber(device),
      mountPoint: this.root,
      firstSeen: new Map<string, number>(),
      deadline: Date.now() + PASSING_HOLDERS_WAIT_MS,
    };
    // An open descriptor keeps the device attached: `mount -o loop` set it to detach at its last close.
    const hold = await open(device, constants.O_RDONLY);
    try {
      for (;;) {
        if (!(await otherNamespacesLetGo(waiting))) return 'in_use';
        try {
          await unmount(this.root, { lazy: false });
        } catch (error) {
          if (/busy/i.test(errorMessage(error))) return 'in_use';
          throw error;
        }
        if (await unclaimed(device)) break;
        // Another namespace took a copy meanwhile: put the mount back, and wait for that one too.
        await mountDevice(device, this.root);
        if (Date.now() >= waiting.deadline) return 'in_use';
        await sleep(25);
      }
      try {
        await run('e2fsck', ['-f', '-p', device]).catch((error: unknown) => {
          // 1: errors corrected; anything above is a real failure.
          if ((error as { code?: unknown }).code !== 1) throw error;
        });
        if (limitBytes > (await this.imageBytes())) {
          await truncate(this.image, limitBytes);
          await run('losetup', ['--set-capacity', device]);
          await run('resize2fs', [device]);
        } else {
          await run('resize2fs', [device, `${Math.floor(limitBytes / 1024)}K`]);
          await truncate(this.image, limitBytes);
          await run('losetup', ['--set-capacity', device]);
        }
      } catch (error) {
        await mountDevice(device, this.root);
        throw failed(`resizing ${this.image} to ${limitBytes} bytes`, error);
      }
      await mountDevice(device, this.root);
      // e2fsck made lost+found again; the workspace does not show it (it is remade when needed).
      await rmdir(`${this.root}/lost+found`).catch(() => undefined);
      return 'done';
    } finally {
      await hold.close();
    }
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    if ((await mountsAt(this.root)).length > 0) await unmount(this.root, { lazy: true });
    // -d detaches a device nothing holds any more (one `mount -o loop` set to
    // detach by itself may be gone already), and marks one still held (a
    // container not yet removed) to detach when it lets go. The kernel
    // finishes a moment later: wait for it, so the next mount finds the
    // image unattached.
    for (const device of await loopDevicesOf(this.image)) await run('losetup', ['-d', device]).catch(() => undefined);
    await loopFreed(this.image, 1000);
  }
}

const CAP_SYS_RESOURCE = 24n;

/** Whether this process may grow a mounted ext4 (some container runtimes drop the capability even for root). */
async function canResizeOnline(): Promise<boolean> {
  const status = await readFile('/proc/self/status', 'utf8');
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return effective !== undefined && ((BigInt(`0x${effective}`) >> CAP_SYS_RESOURCE) & 1n) === 1n;
}

const limitBytesOption = z.number().int().min(MIN_LOOP_IMAGE_BYTES, { error: 'must be an integer of at least 16 MiB' }).max(Number.MAX_SAFE_INTEGER);

const loopImageCapOptionsSchema = z.strictObject({
  image: z.string().min(1),
  mountPoint: z.string().min(1),
  limitBytes: limitBytesOption,
  files: z.number().int().min(16).optional(),
  device: z.string().min(1).optional(),
});

async function measuredLimit(root: string): Promise<number> {
  const fs = await statfs(root);
  return fs.blocks * fs.bsize;
}

async function createImage(image: string, limitBytes: number, files: number | undefined): Promise<void> {
  const handle = await open(image, 'wx', 0o600);
  try {
    await handle.truncate(limitBytes);
  } finally {
    await handle.close();
  }
  const inodes = files ?? Math.max(1024, Math.floor(limitBytes / (16 * 1024)));
  // -m 0: no blocks reserved for root (the sandbox is never root anyway); lazy init keeps creation fast.
  await run('mkfs.ext4', ['-q', '-F', '-m', '0', '-N', String(inodes), '-E', 'lazy_itable_init=1,lazy_journal_init=1', image]).catch((error: unknown) => {
    throw failed(`formatting ${image}`, error);
  });
}

/**
 * Mounts (creating first, when missing) an ext4 image of `limitBytes` at
 * `mountPoint`, nosuid and nodev. Adopts the mount when this image is already
 * mounted there (a restarted host), and refuses a mount point that holds any
 * other filesystem, and a mount point that holds files (they would be
 * hidden). Needs root. Costs, once per workspace (not per session), as
 * `npm run bench:tenant-disk` measured them beside a host `bash -c true` on
 * a loaded 2-vCPU machine: creating, formatting and mounting about 6 times
 * that process, mounting an existing image about 3 times, adopting a mount
 * less than once; synced writes at about half the host filesystem's speed.
 */
export async function createLoopImageCap(options: LoopImageCapOptions): Promise<DiskCap> {
  const { image, mountPoint, limitBytes } = parseOptions(loopImageCapOptionsSchema, options, 'createLoopImageCap');
  if (process.getuid?.() !== 0) throw new Error('createLoopImageCap: mounting a filesystem image needs root');
  await mkdir(mountPoint, { recursive: true, mode: 0o755 });
  const top = (await mountsAt(mountPoint)).at(-1);
  if (top !== undefined) {
    const ours = (await exists(image)) && (await loopDevicesOf(image)).includes(top.source);
    if (!ours) throw failed(`mounting ${image}`, new Error(`${mountPoint} already has another filesystem mounted (${top.source}); refusing to mount over it`));
  } else {
    // Mounting over files would hide them (and a restart would seem to lose them).
    if ((await readdir(mountPoint)).length > 0)
      throw failed(`mounting ${image}`, new Error(`${mountPoint} is not empty; refusing to hide its files under the image`));
    const fresh = !(await exists(image));
    if (fresh) await createImage(image, limitBytes, options.files);
    await mountImage(image, mountPoint, options.device);
    // The workspace starts empty; e2fsck makes lost+found again if it ever needs one.
    if (fresh) await rmdir(`${mountPoint}/lost+found`).catch(() => undefined);
  }
  const device = (await mountsAt(mountPoint)).at(-1)?.source;
  return new LoopImageCap(image, mountPoint, await measuredLimit(mountPoint), device);
}
