import type { SandboxUserPolicy } from './options.js';

/** Who a workspace's commands run as (uid and gid inside the container, which are the host's: no user namespace). */
export interface SandboxIdentity {
  uid: number;
  gid: number;
}

/**
 * Chooses the command identity for a workspace. Nothing in the workspace
 * is ever chmod-ed, chown-ed or given ACL entries for the sandbox; instead:
 * - `'auto'`: the owner of the workspace's root folder (as the opened
 *   folder reports it), uid and gid, so commands have the owner's access and
 *   files they create belong to the owner, as with Gemini CLI's sandbox.
 *   That may be uid 0 (a checkout root owns): such commands hold no
 *   capability and cannot gain one, and the supervisor keeps out of their
 *   reach (hardening.ts, "Identity");
 * - an explicit `{uid, gid}` (a hosting tenant's own): exactly that.
 */
export function resolveSandboxIdentity(owner: { uid: number; gid: number }, policy: SandboxUserPolicy): SandboxIdentity {
  if (policy !== 'auto') return { uid: policy.uid, gid: policy.gid };
  return { uid: owner.uid, gid: owner.gid };
}
