import { createHash } from 'node:crypto';
import { mkdir, open, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { createLoopImageCap, MIN_LOOP_IMAGE_BYTES } from '../../backends/docker/disk-cap/loop-image.js';
import { mountsAt } from '../../backends/docker/disk-cap/mount-table.js';
import { errorMessage } from '../../errors.js';
import { tenantSlug } from '../tenants/disk/tenant-slug.js';
import { defaultWorkspacePath } from '../tenants/tenant-workspace.js';
import { updateClusterTenants, type ClusterTenants } from './cluster-tenants.js';
import type { TenantMove, TenantRemoval } from './tenant-moves.js';
import { fetchWorkspace, measureFile, serveWorkspace, TRANSFER_PATH_PREFIX, type NodeTls } from './workspace-transfer.js';

export interface TenantHandoverOptions {
  etcd: Etcd3;
  /** This node's name. */
  node: string;
  /** The server's data folder (disk images and workspaces are under it). */
  dataDir: string;
  /** The cluster's tenants as this node last read them (tenants-mirror.ts). */
  current(): ClusterTenants;
  /** Ends the tenant's sessions here (running calls get `drainMs` to finish) and lets go of its workspace (HostingServer.evictTenant). */
  evict(tenant: string, drainMs: number, reason: 'tenant_moved' | 'tenant_removed', wanted?: () => boolean): Promise<boolean>;
  /** Where a serving node is reached (`https://ADDRESS:PORT`); undefined when it is not serving. */
  nodeUrl(node: string): Promise<string | undefined>;
  tls: NodeTls;
  onLog(message: string): void;
}

/** Thrown inside a transaction when the record moved on (another step, an abort): the step is simply not this node's any more. */
class Superseded extends Error {}

const EMPTY_SHA256 = createHash('sha256').digest('hex');

/**
 * A node's part in moving and removing tenants (tenant-moves.ts has the
 * states): on every change of the cluster's tenants, each move or removal
 * waiting for this node gets its step done, one step at a time per tenant,
 * again after a failure (2 s, doubling to 30 s) until the record moves on.
 * Every step can be run twice: it reads what is on disk and in etcd, never
 * what it remembers, so a node that crashed mid-step redoes it after its
 * restart. Also answers the other nodes' fetch of a moving workspace.
 */
export class TenantHandover {
  readonly #options: TenantHandoverOptions;
  /** tenant → the step running for it (its key, and its end). */
  readonly #running = new Map<string, { key: string; done: Promise<void> }>();
  readonly #failures = new Map<string, number>();
  readonly #notBefore = new Map<string, number>();
  #retry: NodeJS.Timeout | undefined;
  #closed = false;
  #paths: Promise<{ images: string; workspaces: string; data: string }> | undefined;

  constructor(options: TenantHandoverOptions) {
    this.#options = options;
  }

  /** Looks at the current records and starts what is this node's to do (the mirror calls it after each change). */
  kick(): void {
    if (this.#closed) return;
    const { node } = this.#options;
    const doc = this.#options.current();
    for (const [tenant, move] of Object.entries(doc.moves)) {
      const mine =
        move.from === node ? move.phase === 'draining' || move.phase === 'cleaning' : move.to === node && (move.phase === 'copying' || move.phase === 'pinned');
      if (mine) this.#start(tenant, `${move.id}:${move.phase}`, () => this.#moveStep(tenant, move));
    }
    for (const [tenant, removal] of Object.entries(doc.removals))
      if (removal.node === node) this.#start(tenant, `removal:${removal.since}`, () => this.#removeFiles(tenant, removal));
    void this.#sweepIncoming(doc).catch((error: unknown) => this.#options.onLog(`cluster: cleaning fetched workspaces: ${errorMessage(error)}`));
  }

  /** The intercept's part: the other nodes' `GET …/moves/<id>`; false for any other request. */
  async intercept(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (!(req.url ?? '').startsWith(TRANSFER_PATH_PREFIX)) return false;
    const paths = await this.#dirs();
    await serveWorkspace(req, res, {
      tls: this.#options.tls,
      find: (id) => {
        const entry = Object.entries(this.#options.current().moves).find(([, move]) => move.id === id);
        if (!entry) return undefined;
        const [tenant, move] = entry;
        if (move.from !== this.#options.node || move.phase !== 'copying' || move.workspace?.kind !== 'image') return undefined;
        return { path: imageOf(paths, tenant), bytes: move.workspace.bytes };
      },
    });
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await Promise.allSettled([...this.#running.values()].map((step) => step.done));
  }

  #start(tenant: string, key: string, step: () => Promise<void>): void {
    const running = this.#running.get(tenant);
    if (running !== undefined) return; // one step per tenant at a time; the end of this one looks again
    if ((this.#notBefore.get(key) ?? 0) > Date.now()) return; // failed a moment ago: its timer comes back
    const entry = {
      key,
      done: step().then(
        () => {
          this.#failures.delete(key);
          this.#notBefore.delete(key);
          this.#running.delete(tenant);
          // The next step may be this node's too (a removal after a move, say).
          this.kick();
        },
        (error: unknown) => {
          this.#running.delete(tenant);
          if (error instanceof Superseded) return this.kick();
          const failures = (this.#failures.get(key) ?? 0) + 1;
          this.#failures.set(key, failures);
          const wait = Math.min(30_000, 2_000 * 2 ** (failures - 1));
          this.#notBefore.set(key, Date.now() + wait);
          this.#options.onLog(`cluster: tenant ${tenant}: the ${key.split(':').at(-1) ?? ''} step failed (${errorMessage(error)}); trying again`);
          void this.#report(tenant, key, errorMessage(error));
          this.#later(wait);
        },
      ),
    };
    this.#running.set(tenant, entry);
  }

  /** A move step's failure, told to the operator's command through the record (once per distinct reason; the node tries again regardless). */
  async #report(tenant: string, key: string, problem: string): Promise<void> {
    await updateClusterTenants(this.#options.etcd, (doc) => {
      const move = doc.moves[tenant];
      const text = `node ${this.#options.node}: ${problem}`.slice(0, 500);
      if (move === undefined || `${move.id}:${move.phase}` !== key || move.problem === text) throw new Superseded();
      move.problem = text;
    }).catch(() => {});
  }

  #later(ms: number): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.kick();
    }, ms);
    this.#retry.unref();
  }

  async #dirs(): Promise<{ images: string; workspaces: string; data: string }> {
    // As TenantDisks lays them out: <real data dir>/disk-images/<slug>.ext4 and <real data dir>/workspaces/<slug>.
    this.#paths ??= realpath(this.#options.dataDir).then((data) => ({ data, images: join(data, 'disk-images'), workspaces: join(data, 'workspaces') }));
    return this.#paths;
  }

  /** Changes the move record in one transaction, only while it is still `move` at its phase. */
  async #advance(tenant: string, move: TenantMove, change: (record: TenantMove, doc: ClusterTenants) => void): Promise<void> {
    await updateClusterTenants(this.#options.etcd, (doc) => {
      const now = doc.moves[tenant];
      if (now === undefined || now.id !== move.id || now.phase !== move.phase) throw new Superseded();
      change(now, doc);
    });
  }

  async #moveStep(tenant: string, move: TenantMove): Promise<void> {
    const paths = await this.#dirs();
    const image = imageOf(paths, tenant);
    const mountPoint = join(paths.workspaces, tenantSlug(tenant));
    const incoming = incomingOf(paths, tenant, move.id);
    switch (move.phase) {
      case 'draining': {
        // The old node: new sessions are refused already (tenantOnHold); running calls get their time, then everything closes.
        // A move given up during the drain leaves the tenant's sessions alone.
        const wanted = () => this.#options.current().moves[tenant]?.id === move.id;
        if (!(await this.#options.evict(tenant, move.drainSeconds * 1000, 'tenant_moved', wanted))) throw new Superseded();
        await unmountLeftover(image, mountPoint);
        const workspace = await this.#measure(tenant, paths, image, mountPoint);
        this.#options.onLog(`cluster: tenant ${tenant} drained for its move to node ${move.to} (${workspace.bytes} bytes of workspace)`);
        await this.#advance(tenant, move, (record) => {
          record.workspace = workspace;
          record.phase = 'copying';
          delete record.problem;
        });
        return;
      }
      case 'copying': {
        // The new node: fetch, check, keep aside; then re-pin, in the same transaction as the phase.
        const workspace = move.workspace!;
        if (workspace.kind === 'image' && !(await matches(incoming, workspace))) {
          const url = await this.#options.nodeUrl(move.from);
          if (url === undefined) throw new Error(`node ${move.from}, which has the workspace, is not serving; waiting for it`);
          await fetchWorkspace({ url, id: move.id, tls: this.#options.tls, into: incoming, expected: workspace }).catch(async (error: unknown) => {
            await rm(incoming, { force: true });
            throw error;
          });
        }
        await this.#advance(tenant, move, (record, doc) => {
          record.phase = 'pinned';
          doc.placement[tenant] = move.to;
        });
        this.#options.onLog(`cluster: tenant ${tenant} re-pinned here from node ${move.from}`);
        return;
      }
      case 'pinned': {
        // The new node: the copy goes in place (its sessions wait for this), then the old node may delete its own.
        await this.#options.evict(tenant, 0, 'tenant_moved');
        await unmountLeftover(image, mountPoint);
        if (move.workspace?.kind === 'image') {
          const have = await exists(incoming);
          if (have) {
            await rm(mountPoint, { recursive: true, force: true });
            await mkdir(mountPoint, { recursive: true, mode: 0o755 });
            await rename(incoming, image);
            await syncDir(paths.images);
          } else if (!(await matches(image, move.workspace))) {
            throw new Error(
              'the fetched workspace is missing here (removed by hand?); the old node still has it: abort is not possible now, restore the file or move the tenant back',
            );
          }
        } else {
          // Nothing came: nothing that was here before (an earlier stay on this node) may show up as the tenant's.
          await rm(image, { force: true });
          await rm(mountPoint, { recursive: true, force: true });
        }
        await this.#advance(tenant, move, (record) => {
          record.phase = 'cleaning';
        });
        return;
      }
      case 'cleaning': {
        // The old node: the new copy is in place and serving; this one goes, then the record.
        await this.#options.evict(tenant, 0, 'tenant_moved');
        await unmountLeftover(image, mountPoint);
        await rm(image, { force: true });
        await rm(mountPoint, { recursive: true, force: true });
        await updateClusterTenants(this.#options.etcd, (doc) => {
          if (doc.moves[tenant]?.id !== move.id) throw new Superseded();
          delete doc.moves[tenant];
        });
        this.#options.onLog(`cluster: tenant ${tenant} moved to node ${move.to}; its old copy here is deleted`);
        return;
      }
    }
  }

  /** What the new node must receive: the disk image, or nothing when the tenant never had a workspace here. */
  async #measure(tenant: string, paths: { data: string }, image: string, mountPoint: string): Promise<NonNullable<TenantMove['workspace']>> {
    if (await exists(image)) return { kind: 'image', ...(await measureFile(image)) };
    const folders = [mountPoint, defaultWorkspacePath(paths.data, tenant)];
    for (const folder of folders) {
      if ((await readdir(folder).catch(() => [])).length > 0)
        throw new Error(`its workspace ${folder} is a plain folder (a server without disk caps): only disk images are moved; give the move up with --abort`);
    }
    return { kind: 'none', bytes: 0, sha256: EMPTY_SHA256 };
  }

  /** A removed tenant's files on this node: its sessions end, its disk is unmounted and deleted, then the record. */
  async #removeFiles(tenant: string, removal: TenantRemoval): Promise<void> {
    const paths = await this.#dirs();
    const image = imageOf(paths, tenant);
    const mountPoint = join(paths.workspaces, tenantSlug(tenant));
    await this.#options.evict(tenant, 0, 'tenant_removed');
    await unmountLeftover(image, mountPoint);
    await rm(image, { force: true });
    await rm(mountPoint, { recursive: true, force: true });
    await rm(join(paths.data, 'tenants', tenant), { recursive: true, force: true });
    await updateClusterTenants(this.#options.etcd, (doc) => {
      if (doc.removals[tenant]?.since !== removal.since) throw new Superseded();
      delete doc.removals[tenant];
    });
    this.#options.onLog(`cluster: tenant ${tenant} removed: its workspace here is deleted`);
  }

  /** Fetched copies of moves that are no longer this node's to place (given up, or another move since) go. */
  async #sweepIncoming(doc: ClusterTenants): Promise<void> {
    const paths = await this.#dirs();
    const wanted = new Set(
      Object.entries(doc.moves)
        .filter(([, move]) => move.to === this.#options.node)
        .map(([tenant, move]) => incomingOf(paths, tenant, move.id)),
    );
    const names = await readdir(paths.images).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(paths.images, name);
      if (name.startsWith('.incoming-') && !wanted.has(path)) await rm(path, { force: true });
    }
  }
}

function imageOf(paths: { images: string }, tenant: string): string {
  return join(paths.images, `${tenantSlug(tenant)}.ext4`);
}

function incomingOf(paths: { images: string }, tenant: string, id: string): string {
  return join(paths.images, `.incoming-${tenantSlug(tenant)}-${id}`);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Whether `path` is there with exactly that size and SHA-256. */
async function matches(path: string, expected: { bytes: number; sha256: string }): Promise<boolean> {
  const size = await stat(path).then(
    (stats) => stats.size,
    () => -1,
  );
  if (size !== expected.bytes) return false;
  return (await measureFile(path)).sha256 === expected.sha256;
}

/**
 * The tenant's image still mounted once the server let go of it: a server
 * that crashed left it so (mounts outlive it). Adopted (only when the mount
 * is that image: createLoopImageCap checks) and released. Anything else
 * mounted there stops the step.
 */
async function unmountLeftover(image: string, mountPoint: string): Promise<void> {
  if ((await mountsAt(mountPoint)).length === 0) return;
  if (!(await exists(image))) throw new Error(`${mountPoint} has something mounted that is not the tenant's image`);
  const cap = await createLoopImageCap({ image, mountPoint, limitBytes: MIN_LOOP_IMAGE_BYTES });
  await cap.release();
}

/** A rename is durable once its folder is synced. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
