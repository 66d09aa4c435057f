import type { SandboxUserPolicy } from './options.js';
import { SANDBOX_GID, SANDBOX_UID } from './sandbox-paths.js';

/** Who a workspace's commands run as, and whether the supervisor must grant it access. */
export interface SandboxIdentity {
  uid: number;
  gid: number;
  /** Add `u:<uid>:rwX` access + default ACL entries to the workspace (root-owned workspaces). */
  grantAcl: boolean;
}

/**
 * Chooses the command identity for a workspace from its root folder's owner
 * (as the opened folder reports it). Commands never run as root:
 * - a workspace owned by a non-root user: that user's uid (and gid, unless it
 *   is the root group), so files written in the sandbox belong to its owner;
 * - a workspace owned by root (CI, containers): the image's sandbox uid
 *   10001, granted access through POSIX ACLs (when `grantAcl` allows);
 * - an explicit `{uid, gid}` policy: exactly that, no ACLs.
 */
export function resolveSandboxIdentity(owner: { uid: number; gid: number }, policy: SandboxUserPolicy, grantAcl: boolean): SandboxIdentity {
  if (policy !== 'auto') return { uid: policy.uid, gid: policy.gid, grantAcl: false };
  const info = owner;
  if (info.uid !== 0) return { uid: info.uid, gid: info.gid !== 0 ? info.gid : SANDBOX_GID, grantAcl: false };
  return { uid: SANDBOX_UID, gid: SANDBOX_GID, grantAcl };
}
