import { EventEmitter } from 'node:events';
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { basename, dirname } from 'node:path';
import { errorMessage, ToolcellError, ToolErrorType } from '../../errors.js';
import type { KeyDirectory, StoredKey } from '../auth/api-key.js';
import type { PolicyRule } from '../../policy/policy-rule.js';
import { resolveLimits, type TenantLimits } from '../admission/limits.js';
import { resolveTenantNetwork } from './tenant-policy-fields.js';
import { resolveTenantRuntime } from './tenant-runtime.js';
import { loadTenantPolicies } from './tenant-policy.js';
import { readTenantsFile, writeTenantsFile, type TenantsFile } from './tenants-file.js';
import { assignTenantUids } from './tenant-uid.js';
import { workspaceOverlap } from './workspace-overlap.js';

/** One tenant as the server sees it: limits resolved, workspace as the file says (undefined: the data dir's). */
export interface TenantView {
  name: string;
  /** The uid and gid its commands run as (tenant-uid.ts). */
  uid: number;
  workspace?: string;
  limits: TenantLimits;
  /** The rules of the defaults' and the tenant's policy files, read when the tenants file was (tenant-policy.ts). */
  policy: readonly PolicyRule[];
  /** The egress allow list (the tenant's `network`, else the defaults'); undefined: no network. */
  network?: readonly string[];
  /** The OCI runtime of its sandboxes (the tenant's `runtime`, else the defaults'); undefined: the operator's. */
  runtime?: string;
  /** The Dockerfile of the tenant's own sandbox image (tenant-image.ts); undefined: toolcell's image. */
  dockerfile?: string;
  /** The tenant's secrets, still sealed (name → sealed value); opened per session (tenant-secrets.ts). */
  secrets?: Readonly<Record<string, string>>;
}

export interface TenantStoreEvents {
  /** The tenant is gone from the file: its live sessions must close. */
  'tenant-removed': [name: string];
  /**
   * Keys that worked before this reload and no longer do (revoked, or gone
   * from a tenant that remains): the sessions they opened must close.
   * Keys of a removed tenant come with 'tenant-removed' instead.
   */
  'keys-revoked': [ids: string[]];
  /** The file was reloaded and is valid. */
  reloaded: [];
}

export interface TenantStoreOptions {
  file: string;
  /** How often the file is checked when fs.watch says nothing (it misses changes on some filesystems). Default 1000 ms. */
  pollMs?: number;
  /** One line per problem (a bad edit), never per poll. */
  onLog?: (message: string) => void;
  /** How long a file that fails to read must stay unchanged before its problem counts: a file caught half-written is read again. Default 250 ms. */
  settleMs?: number;
  /**
   * The server's data directory: a tenant's own workspace that lies in it
   * (where the default workspaces are) or contains it is refused, as is one
   * that meets another's after symlinks (workspace-overlap.ts).
   */
  dataDir?: string;
}

/**
 * The tenants file, loaded and kept current: fs.watch on its folder (the
 * file is replaced by rename, so its own inode changes) and a poll as a
 * fallback, so a revoked key is refused within about a second. A bad edit
 * keeps the last good state and is logged once, when the file has settled.
 */
export class TenantStore extends EventEmitter<TenantStoreEvents> implements KeyDirectory {
  readonly file: string;
  readonly #pollMs: number;
  readonly #settleMs: number;
  readonly #log: (message: string) => void;
  readonly #dataDir: string | undefined;
  #tenants = new Map<string, TenantView>();
  #keys = new Map<string, StoredKey>();
  #watcher: FSWatcher | undefined;
  #poller: NodeJS.Timeout | undefined;
  #signature = '';
  #lastProblem = '';
  #reloading: Promise<void> | undefined;
  #again = false;

  /** Reads the file (it must exist and be valid) and starts watching it. */
  static async open(options: TenantStoreOptions): Promise<TenantStore> {
    const store = new TenantStore(options);
    const content = await store.#read();
    store.#signature = await signature(options.file);
    store.#apply(content);
    store.#watch();
    return store;
  }

  private constructor(options: TenantStoreOptions) {
    super();
    this.file = options.file;
    this.#pollMs = options.pollMs ?? 1000;
    this.#settleMs = options.settleMs ?? 250;
    this.#log = options.onLog ?? (() => {});
    this.#dataDir = options.dataDir;
  }

  findKey(id: string): StoredKey | undefined {
    return this.#keys.get(id);
  }

  tenant(name: string): TenantView | undefined {
    return this.#tenants.get(name);
  }

  tenants(): TenantView[] {
    return [...this.#tenants.values()];
  }

  /** Reads the file again now (the watcher and poller call this; tests may too). */
  reload(): Promise<void> {
    if (this.#reloading) {
      this.#again = true;
      return this.#reloading;
    }
    this.#reloading = (async () => {
      do {
        this.#again = false;
        await this.#reloadOnce();
      } while (this.#again);
    })().finally(() => (this.#reloading = undefined));
    return this.#reloading;
  }

  /** Why the file as it is on disk now is not in force (the last good state is), or undefined when it is. */
  problem(): string | undefined {
    return this.#lastProblem === '' ? undefined : this.#lastProblem;
  }

  close(): void {
    this.#watcher?.close();
    clearInterval(this.#poller);
  }

  async #reloadOnce(): Promise<void> {
    const now = await signature(this.file);
    if (now === this.#signature) return;
    try {
      const content = await this.#read();
      this.#signature = now;
      this.#lastProblem = '';
      this.#apply(content!);
      this.emit('reloaded');
    } catch (error) {
      // A file caught half-written (an editor or `>` truncates, then writes)
      // is not a bad edit: the problem stands only if the file is still the
      // same a moment later; otherwise it is read again.
      await delay(this.#settleMs);
      if ((await signature(this.file)) !== now) {
        this.#again = true;
        return;
      }
      const problem = errorMessage(error);
      // Once per distinct problem: the poll must not repeat it every second.
      if (problem !== this.#lastProblem) this.#log(`${problem}; keeping the tenants as they were`);
      this.#lastProblem = problem;
      this.#signature = now;
    }
  }

  /**
   * The file, read and checked whole: its schema, then where its workspaces
   * lie on disk. A tenant written without a uid (by hand, or before tenants
   * had one) gets the next one, recorded in the file at once, so that it
   * keeps it across restarts.
   */
  async #read(): Promise<TenantsFile> {
    const content = (await readTenantsFile(this.file))!;
    const overlap = await workspaceOverlap(content, { dataDir: this.#dataDir, tenantsFile: this.file });
    if (overlap !== undefined) throw new ToolcellError(ToolErrorType.INVALID_TENANTS_FILE, `Tenants file ${this.file}: ${overlap}`);
    if (assignTenantUids(content)) {
      await writeTenantsFile(this.file, content);
      this.#log(`recorded tenant uids in ${this.file} (next ${content.nextUid})`);
    }
    return content;
  }

  #apply(content: TenantsFile): void {
    const tenants = new Map<string, TenantView>();
    const keys = new Map<string, StoredKey>();
    // Policy files are read (and checked) here, before anything changes: a bad one keeps the last good state.
    const policies = loadTenantPolicies(this.file, content);
    for (const [name, entry] of Object.entries(content.tenants)) {
      const network = resolveTenantNetwork(content.defaults?.network, entry.network);
      const runtime = resolveTenantRuntime(content.defaults?.runtime, entry.runtime);
      tenants.set(name, {
        name,
        uid: entry.uid!,
        ...(entry.workspace ? { workspace: entry.workspace } : {}),
        limits: resolveLimits(content.defaults?.limits, entry.limits),
        policy: policies.get(name) ?? [],
        ...(network !== undefined ? { network } : {}),
        ...(runtime !== undefined ? { runtime } : {}),
        ...(entry.image ? { dockerfile: entry.image.dockerfile } : {}),
        ...(entry.secrets ? { secrets: Object.fromEntries(Object.entries(entry.secrets).map(([name, secret]) => [name, secret.sealed])) } : {}),
      });
      for (const key of entry.keys) keys.set(key.id, { tenant: name, hash: key.hash, revoked: key.revokedAt !== undefined });
    }
    const removed = [...this.#tenants.keys()].filter((name) => !tenants.has(name));
    const revoked = [...this.#keys].filter(([id, old]) => !old.revoked && tenants.has(old.tenant) && keys.get(id)?.revoked !== false).map(([id]) => id);
    this.#tenants = tenants;
    this.#keys = keys;
    for (const name of removed) this.emit('tenant-removed', name);
    if (revoked.length > 0) this.emit('keys-revoked', revoked);
  }

  #watch(): void {
    const name = basename(this.file);
    try {
      this.#watcher = watch(dirname(this.file), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name) void this.reload();
      });
      this.#watcher.on('error', () => this.#watcher?.close());
    } catch {
      // Some filesystems cannot be watched: the poll alone serves.
    }
    this.#poller = setInterval(() => void this.reload(), this.#pollMs);
    this.#poller.unref();
  }
}

/** What changes when the file is replaced or edited in place. */
async function signature(file: string): Promise<string> {
  try {
    const stats = await stat(file);
    return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
  } catch {
    return 'missing';
  }
}
