import { chmod, mkdir, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { createLoopImageCap, MIN_LOOP_IMAGE_BYTES } from '../../../backends/docker/disk-cap/loop-image.js';
import type { DiskCap } from '../../../backends/docker/disk-cap/disk-cap.js';
import { mountsAt } from '../../../backends/docker/disk-cap/mount-table.js';
import { parseOptions } from '../../../contracts/parse-options.js';
import { isToolcellError, ToolcellError } from '../../../errors.js';
import { TENANT_SLUG, tenantSlug } from './tenant-slug.js';
import { giveWorkspaceTo } from '../workspace-owner.js';

const TenantDisksOptionsSchema = z
  .object({
    /** The server's data directory: `disk-images/` and `workspaces/` are made in it. */
    dataDir: z.string().min(1),
  })
  .strict();

export type TenantDisksOptions = z.input<typeof TenantDisksOptionsSchema>;

const TenantDiskLimitsSchema = z
  .object({
    /**
     * The hard cap on the tenant's workspace, all its sessions together.
     * Absent: an existing image keeps its size; no image, a plain folder and
     * no cap (a cap given later is refused while that folder holds files).
     */
    diskBytes: z
      .number()
      .int()
      .min(MIN_LOOP_IMAGE_BYTES, { error: `must be at least ${MIN_LOOP_IMAGE_BYTES} (16 MiB)` })
      .optional(),
  })
  .strip();

export type TenantDiskLimits = z.input<typeof TenantDiskLimitsSchema>;

/**
 * One holder's use of a tenant's workspace. A Docker backend checks a
 * workspace by device and inode for as long as it lives, so the folder must
 * keep both: the inode of an ext4 root is always 2, and TenantDisks mounts a
 * tenant's image on the loop device it had before whenever that one is free
 * (a resize keeps it attached throughout). Another process can take a freed
 * loop device meanwhile; a server that keeps one handle per tenant while
 * the tenant has sessions never lets it go.
 */
export interface TenantWorkspace {
  /** The workspace folder (a real path): bind-mount it into the tenant's containers, confine file tools to it. */
  readonly path: string;
  /** The cap the kernel enforces on it, in bytes of filesystem, or undefined when uncapped. */
  readonly limitBytes: number | undefined;
  /** Who it belongs to (the `owner` it was prepared for), whom the tenant's commands run as. */
  readonly owner: { uid: number; gid: number } | undefined;
  /** Lets go of the workspace; the last holder's release unmounts it and frees its loop device. Idempotent. */
  release(): Promise<void>;
}

interface LiveDisk {
  path: string;
  cap: DiskCap | undefined;
  holders: number;
}

/**
 * The tenants' workspaces on one server, each capped by an ext4 image of its
 * own mounted through a loop device (src/backends/docker/disk-cap/): writes
 * past the cap fail with ENOSPC for every session and command of the tenant
 * together, and for nobody else.
 *
 * Layout under `dataDir`: `disk-images/<slug>.ext4` (0700, root only, outside
 * every workspace) and `workspaces/<slug>` (the mount point), where the slug
 * comes from `tenantSlug`, so a tenant name never becomes a path. Both
 * persist: preparing a tenant again (in this process or after a restart)
 * reuses its image and data, and a mount a crashed server left is adopted.
 *
 * Holders are counted per tenant: every `prepare` returns a handle, and the
 * workspace is unmounted when the last handle is released (or by
 * `releaseAll` at shutdown). Calls for one tenant run one at a time.
 *
 * @example
 * const disks = await TenantDisks.open({ dataDir: '/var/lib/toolcell' });
 * const workspace = await disks.prepare('acme', { diskBytes: 1 << 30 });
 * // … sessions bind-mount workspace.path …
 * await disks.releaseAll();
 */
export class TenantDisks {
  readonly imagesDir: string;
  readonly workspacesDir: string;
  readonly #live = new Map<string, LiveDisk>();
  readonly #queues = new Map<string, Promise<void>>();
  /** The loop device each tenant had last: asked for again, so its workspace keeps its device number (see TenantWorkspace). */
  readonly #devices = new Map<string, string>();

  private constructor(imagesDir: string, workspacesDir: string) {
    this.imagesDir = imagesDir;
    this.workspacesDir = workspacesDir;
  }

  static async open(options: TenantDisksOptions): Promise<TenantDisks> {
    const { dataDir } = parseOptions(TenantDisksOptionsSchema, options, 'TenantDisks.open');
    await mkdir(dataDir, { recursive: true, mode: 0o755 });
    const real = await realpath(dataDir);
    const imagesDir = join(real, 'disk-images');
    const workspacesDir = join(real, 'workspaces');
    await mkdir(imagesDir, { recursive: true, mode: 0o700 });
    // Only root (the server) may reach the images, whatever umask or an earlier run left.
    await chmod(imagesDir, 0o700);
    await mkdir(workspacesDir, { recursive: true, mode: 0o755 });
    return new TenantDisks(imagesDir, workspacesDir);
  }

  /** Where `tenant`'s image lives (it may not exist yet). */
  imagePath(tenant: string): string {
    return join(this.imagesDir, `${safeSlug(tenant)}.ext4`);
  }

  /** Where `tenant`'s workspace is (mounted or not). */
  workspacePath(tenant: string): string {
    return join(this.workspacesDir, safeSlug(tenant));
  }

  /**
   * Makes `tenant`'s workspace ready and returns a handle on it: creates its
   * image on first use, mounts it (or adopts the mount already there), and
   * brings its size to `limits.diskBytes`. Lowering it below what is used
   * throws `disk_limit_below_usage` and changes nothing. A change that needs
   * the filesystem unmounted (any shrink; growth where the server lacks
   * CAP_SYS_RESOURCE) waits while the tenant's containers hold it: the old
   * cap stays (`limitBytes` says which) and the next `prepare` after they
   * are gone applies it (other mount namespaces that hold it for a moment,
   * sandboxes starting elsewhere, are waited for up to 3 s first). Other failures throw `disk_cap_failed`. With
   * `owner` (the tenant's uid and gid), the workspace is given to it
   * (giveWorkspaceTo: at once when it already is).
   */
  async prepare(tenant: string, limits: TenantDiskLimits = {}, owner?: { uid: number; gid: number }): Promise<TenantWorkspace> {
    const { diskBytes } = parseOptions(TenantDiskLimitsSchema, limits, 'TenantDisks.prepare');
    const slug = safeSlug(tenant);
    return this.#serially(slug, async () => {
      let live = this.#live.get(slug);
      if (live === undefined) {
        live = await this.#mount(tenant, diskBytes);
        this.#live.set(slug, live);
      } else if (diskBytes !== undefined && live.cap !== undefined) {
        await live.cap.resize(diskBytes).catch((error: unknown) => {
          throw naming(tenant, error);
        });
      }
      if (owner !== undefined) await giveWorkspaceTo(live.path, owner);
      live.holders += 1;
      return this.#handle(slug, live, owner);
    });
  }

  /** Unmounts every workspace this instance holds (server shutdown); handles still out become no-ops. */
  async releaseAll(): Promise<void> {
    const slugs = [...this.#live.keys()];
    await Promise.all(slugs.map((slug) => this.#serially(slug, () => this.#unmount(slug))));
  }

  /**
   * Unmounts the tenant workspaces mounted under this data directory that no
   * handle of this instance holds: a crashed server's (its mounts outlive
   * it, and a restarted server adopts a tenant's only when that tenant comes
   * back). A clean shutdown calls it after `releaseAll`, so that the data
   * directory can then be moved or removed. Only this directory's own images
   * mounted at their own mount points are touched; anything else mounted
   * there is left alone. Resolves with the workspaces it released.
   */
  async releaseLeftovers(): Promise<string[]> {
    const names = await readdir(this.workspacesDir).catch(() => [] as string[]);
    const released: string[] = [];
    for (const slug of names.filter((name) => TENANT_SLUG.test(name))) {
      await this.#serially(slug, async () => {
        const path = join(this.workspacesDir, slug);
        if (this.#live.has(slug) || (await mountsAt(path)).length === 0) return;
        // Adopting checks that the mount is this slug's image (never another filesystem), then release undoes it as usual.
        const cap = await createLoopImageCap({ image: join(this.imagesDir, `${slug}.ext4`), mountPoint: path, limitBytes: MIN_LOOP_IMAGE_BYTES }).catch(
          () => undefined,
        );
        if (!cap) return;
        await cap.release();
        released.push(path);
      });
    }
    return released;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.releaseAll();
  }

  async #mount(tenant: string, diskBytes: number | undefined): Promise<LiveDisk> {
    const path = this.workspacePath(tenant);
    const image = this.imagePath(tenant);
    const hasImage = await stat(image).then(
      () => true,
      () => false,
    );
    if (diskBytes === undefined && !hasImage) {
      await mkdir(path, { recursive: true, mode: 0o755 });
      return { path, cap: undefined, holders: 0 };
    }
    try {
      const device = this.#devices.get(tenantSlug(tenant));
      const cap = await createLoopImageCap({
        image,
        mountPoint: path,
        limitBytes: diskBytes ?? MIN_LOOP_IMAGE_BYTES,
        ...(device !== undefined ? { device } : {}),
      });
      if (diskBytes !== undefined)
        await cap.resize(diskBytes).catch(async (error: unknown) => {
          await cap.release();
          throw error;
        });
      return { path, cap, holders: 0 };
    } catch (error) {
      throw naming(tenant, error);
    }
  }

  #handle(slug: string, live: LiveDisk, owner: { uid: number; gid: number } | undefined): TenantWorkspace {
    let released = false;
    return {
      path: live.path,
      owner,
      get limitBytes() {
        return live.cap?.limitBytes;
      },
      release: () => {
        if (released) return Promise.resolve();
        released = true;
        return this.#serially(slug, async () => {
          if (this.#live.get(slug) !== live) return; // released by releaseAll already
          live.holders -= 1;
          if (live.holders <= 0) await this.#unmount(slug);
        });
      },
    };
  }

  async #unmount(slug: string): Promise<void> {
    const live = this.#live.get(slug);
    if (live === undefined) return;
    this.#live.delete(slug);
    if (live.cap?.device !== undefined) this.#devices.set(slug, live.cap.device);
    await live.cap?.release();
  }

  /** Runs `work` after every earlier call for the same tenant has settled. */
  #serially<T>(slug: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(slug) ?? Promise.resolve();
    const next = previous.then(work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.#queues.set(slug, settled);
    void settled.then(() => {
      if (this.#queues.get(slug) === settled) this.#queues.delete(slug);
    });
    return next;
  }
}

function safeSlug(tenant: string): string {
  const slug = tenantSlug(tenant);
  // tenantSlug guarantees it; checked again because a path is built from it.
  if (!TENANT_SLUG.test(slug)) throw new Error(`TenantDisks: unsafe slug ${JSON.stringify(slug)}`);
  return slug;
}

/** The same error, its message prefixed with the tenant it is about (the operator reads it). */
function naming(tenant: string, error: unknown): unknown {
  if (!isToolcellError(error)) return error;
  return new ToolcellError(error.code, `Tenant ${JSON.stringify(tenant)}: ${error.message}`, { cause: error });
}
