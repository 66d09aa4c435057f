import { z } from 'zod';
import { sandboxRuntimeSchema } from '../../contracts/sandbox-runtime.js';

/**
 * The container limits one session may set for itself (a hosting tenant's
 * memory, CPUs and pids), over the backend-wide `limits` that stay the
 * default. One schema for both places that check them: the Docker backend's
 * options and `openSession` (through the shell service and its thread).
 * Only zod here: the shell layer imports it without loading dockerode.
 */

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Memory limit in bytes; swap is disabled (MemorySwap = Memory). */
export const memoryBytesSchema = z
  .number()
  .int()
  .min(16 * MiB)
  .max(1024 * GiB);
/** CPUs the container may use (NanoCpus). */
export const cpusSchema = z.number().min(0.01).max(1024);
/** Processes and threads in the container (PidsLimit). */
export const pidsSchema = z.number().int().min(16).max(1_000_000);

/**
 * A CPU group: containers of one group sit in one parent cgroup
 * (`/toolcell-<group>`), so under contention each group gets an equal share
 * of the machine's CPU time however many containers it runs (a hosting
 * tenant's sessions are one group). `cpus` still caps each container.
 */
export const cpuGroupSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,99}$/, { error: 'must be 1-100 characters of a-z 0-9 -' });

/** A non-root uid or gid (the kernel's ids are 32-bit; 2^32-1 means "none"). */
const idSchema = z
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 2);

/**
 * Who the session's commands run as, instead of the backend's `user`
 * policy: a hosting tenant's own uid and gid, so that tenants never share
 * the kernel's per-user budgets (inotify instances, pending signals,
 * message queues, pipe buffers) nor a uid on the host.
 */
export const sessionUserSchema = z.strictObject({ uid: idSchema, gid: idSchema });

/** Per-session container limits; a field left out takes the backend's value. Unknown keys are refused. */
export const sessionLimitsSchema = z.strictObject({
  memoryBytes: memoryBytesSchema.optional(),
  cpus: cpusSchema.optional(),
  pids: pidsSchema.optional(),
  cpuGroup: cpuGroupSchema.optional(),
  user: sessionUserSchema.optional(),
  /** The OCI runtime of this session's container (e.g. `runsc`), over the backend's `runtime` (a hosting tenant's). */
  runtime: sandboxRuntimeSchema.optional(),
});

export type SessionLimits = z.input<typeof sessionLimitsSchema>;

/**
 * The limits a session's container gets, filled in (a CPU group, a user and a
 * runtime only when named; else the workspace owner and the engine's default
 * runtime).
 */
export type EffectiveSessionLimits = Required<Omit<SessionLimits, 'cpuGroup' | 'user' | 'runtime'>> & Pick<SessionLimits, 'cpuGroup' | 'user' | 'runtime'>;

/** A stable key of effective limits: spares of the warm pool are only handed to sessions with the same one. */
export function sessionLimitsKey(limits: EffectiveSessionLimits): string {
  const user = limits.user === undefined ? '' : `${limits.user.uid}:${limits.user.gid}`;
  return `${limits.memoryBytes}/${limits.cpus}/${limits.pids}/${limits.cpuGroup ?? ''}/${user}/${limits.runtime ?? ''}`;
}

/** The parent cgroup of a CPU group's containers. */
export function cpuGroupCgroup(group: string): string {
  return `/toolcell-${group}`;
}
