import { z } from 'zod';

/**
 * Every tenant's commands run as a uid (and gid) of its own, so no tenant
 * shares a per-user kernel budget with another (inotify instances, pending
 * signals, POSIX message queue bytes, pipe buffers: one tenant exhausting
 * its own leaves the others theirs) nor a uid on the host. The uid is
 * stored with the tenant in the tenants file, so it is stable across
 * restarts, and handed out from a counter that only grows (`nextUid`), so a
 * removed tenant's uid, which may still own files (its disk image stays on
 * the server), never goes to another tenant.
 *
 * The range starts above the ids that hosts usually hand out: regular
 * users (1000-60000), systemd's dynamic users (61184-65519), the
 * subordinate ranges of user namespaces (from 100000 up, in blocks of
 * 65536) and systemd-nspawn's container range (524288-1879048191). The gid
 * is the same number: a group per tenant.
 */
export const TENANT_UID_FIRST = 1_900_000_000;
/** The last uid a tenant gets (the kernel's ids are 32-bit; staying below 2^31 avoids tools that read them as signed). */
export const TENANT_UID_LAST = 2 ** 31 - 2;

export const tenantUidSchema = z.number().int().min(TENANT_UID_FIRST).max(TENANT_UID_LAST);

/** What `assignTenantUids` reads and writes of a tenants file. */
export interface UidRecords {
  nextUid?: number | undefined;
  tenants: Record<string, { uid?: number | undefined }>;
}

/**
 * Gives every tenant without a uid the next one, in the file's order, and
 * moves `nextUid` past every uid handed out so far (a uid written by hand
 * included). The same file gives the same uids wherever this runs (the
 * `tenant` commands, a server finding a hand-written tenant). Returns
 * whether anything changed. Throws when the range is used up.
 */
export function assignTenantUids(file: UidRecords): boolean {
  const used = Object.values(file.tenants).flatMap((tenant) => (tenant.uid !== undefined ? [tenant.uid] : []));
  let next = Math.max(file.nextUid ?? TENANT_UID_FIRST, TENANT_UID_FIRST, ...used.map((uid) => uid + 1));
  let changed = next !== file.nextUid;
  for (const tenant of Object.values(file.tenants)) {
    if (tenant.uid !== undefined) continue;
    if (next > TENANT_UID_LAST) throw new RangeError(`no tenant uid is left (the range ends at ${TENANT_UID_LAST})`);
    tenant.uid = next++;
    changed = true;
  }
  file.nextUid = next;
  return changed;
}

/** A tenant's uid and gid for its sandboxes and its workspace. */
export function tenantUser(uid: number): { uid: number; gid: number } {
  return { uid, gid: uid };
}
