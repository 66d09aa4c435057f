import { z } from 'zod';
import { sandboxRuntimeSchema } from '../contracts/sandbox-runtime.js';

/**
 * The container limits one session may set for itself, over the backend's
 * own: one contract from a hosting tenant's limits (the tenants file) through
 * the shell service to the Docker backend, which turns `memory` into
 * `HostConfig.Memory`. Each field keeps its name all the way; its schema
 * here is the one every layer checks it with, so the tenants file refuses,
 * when it is read, what a session's opening would refuse later. Only zod
 * here: the shell layer imports it without loading dockerode.
 */

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Memory limit in bytes; swap is disabled (MemorySwap = Memory). */
export const memorySchema = z
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
 * tenant's sessions are one group). `cpus` still caps each container, and
 * `cpuGroupCpus` all of them together.
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
  memory: memorySchema.optional(),
  cpus: cpusSchema.optional(),
  pids: pidsSchema.optional(),
  cpuGroup: cpuGroupSchema.optional(),
  /** CPUs the containers of `cpuGroup` may use together: a CFS quota on their parent cgroup (docker/cpu-group-quota.ts). */
  cpuGroupCpus: cpusSchema.optional(),
  user: sessionUserSchema.optional(),
  /** The OCI runtime of this session's container (e.g. `runsc`), over the backend's `runtime` (a hosting tenant's). */
  runtime: sandboxRuntimeSchema.optional(),
});

export type SessionLimits = z.input<typeof sessionLimitsSchema>;

/**
 * A stable key of limits (any plain record of them): equal limits give equal
 * keys whatever the order of their fields, and a field left out is not one
 * set to a value. Spares of the warm pool go only to sessions with the same
 * key; a hosting tenant's resources are made anew when theirs changes.
 */
export function limitsKey(limits: object): string {
  return JSON.stringify(canonical(limits));
}

function canonical(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(canonical);
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, field]) => [name, canonical(field)]),
  );
}

/** The parent cgroup of a CPU group's containers. */
export function cpuGroupCgroup(group: string): string {
  return `/toolcell-${group}`;
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** `512m`, `1g`, `64k`, `1048576` → bytes (binary units, as Docker's `--memory`). Undefined when malformed. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([kmg]?)b?$/i.exec(text.trim());
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/** `536870912` → `512m`: sizes as people write them. */
export function formatSize(bytes: number): string {
  for (const [suffix, unit] of [
    ['g', 1024 ** 3],
    ['m', 1024 ** 2],
    ['k', 1024],
  ] as const)
    if (bytes % unit === 0) return `${bytes / unit}${suffix}`;
  return String(bytes);
}

/** A size written as `512m` or a number of bytes: its bytes, or undefined when absent. */
export function sizeBytes(value: number | string | undefined): number | undefined {
  return typeof value === 'string' ? parseSize(value) : value;
}

/**
 * A size written as `512m` (or a number of bytes), kept as written so a file
 * stays readable, whose bytes must pass `bytes` (`memorySchema`): a file
 * checks its sizes with the schema of the layer that uses them.
 */
export function writtenSize(bytes: z.ZodNumber) {
  const range =
    bytes.maxValue !== null && bytes.maxValue < Number.MAX_SAFE_INTEGER
      ? `from ${formatSize(bytes.minValue ?? 1)} to ${formatSize(bytes.maxValue)}`
      : `of at least ${formatSize(bytes.minValue ?? 1)}`;
  return z.union([z.number().int(), z.string()]).refine(
    (value) => {
      const parsed = sizeBytes(value);
      return parsed !== undefined && bytes.safeParse(parsed).success;
    },
    { error: `must be a size ${range}, such as 512m or 1g (k, m, g suffixes)` },
  );
}
