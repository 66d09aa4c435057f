/**
 * Shared machinery for tests of tenants' capped workspaces: a gate for tests
 * that mount filesystems (root needed: FAILS under CI=true, skips elsewhere),
 * a TenantDisks on a fresh data directory that is released and removed at
 * teardown, and views of the host's mount and loop-device tables.
 */
import type { ExecutionContext } from 'ava';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loopDevicesOf, mountsAt } from '../../src/backends/docker/disk-cap/mount-table.js';
import { TenantDisks } from '../../src/hosting/tenants/disk/tenant-disks.js';

export const MiB = 1024 * 1024;

/** True when this process may mount images; otherwise fails the test under CI=true, or skips it with a note. */
export function canMount(t: ExecutionContext): boolean {
  if (process.getuid?.() === 0) return true;
  if (process.env['CI'] === 'true') t.fail('mounting a filesystem image needs root, and CI=true');
  else t.log('skipped: mounting a filesystem image needs root');
  if (process.env['CI'] !== 'true') t.pass();
  return false;
}

/** A fresh data directory (real path), removed at teardown after `release` (run it first). */
export async function makeDataDir(t: ExecutionContext, release: () => Promise<void> = async () => {}): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-tenants-')));
  t.teardown(async () => {
    await release();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });
  return dir;
}

/** A TenantDisks on a fresh data directory; every workspace it mounted is released at teardown. */
export async function useTenantDisks(t: ExecutionContext): Promise<TenantDisks> {
  let disks: TenantDisks | undefined;
  const dataDir = await makeDataDir(t, async () => disks?.releaseAll());
  disks = await TenantDisks.open({ dataDir });
  return disks;
}

/** How many filesystems are mounted at `path` (stacked mounts count each). */
export async function mountCount(path: string): Promise<number> {
  return (await mountsAt(path)).length;
}

/** The loop devices attached to `image`. */
export { loopDevicesOf };

/** Re-exported so test files need one import for the module under test. */
export { TenantDisks };
