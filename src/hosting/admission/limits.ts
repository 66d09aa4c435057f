import { z } from 'zod';
import { MIN_LOOP_IMAGE_BYTES } from '../../backends/docker/disk-cap/loop-image.js';
import { cpusSchema, formatSize, memorySchema, pidsSchema, sizeBytes, writtenSize } from '../../backends/session-limits.js';

/**
 * A tenant's limits: what each one bounds, its default and why. The tenants
 * file holds defaults for every tenant (`defaults.limits`) and per-tenant
 * overrides; `resolveLimits` merges them over these. Every limit is
 * enforced, and every refusal names it.
 */

const count = (max: number) => z.number().int().min(1).max(max);

/** Every limit, optional: the shape of `defaults.limits` and of a tenant's `limits`. */
export const limitsSchema = z.strictObject({
  /** MCP sessions open at once (each holds a container). */
  sessions: count(10_000).optional(),
  /** New sessions per minute (each starts a container): a token bucket holding this many, refilled evenly over a minute. */
  sessionsPerMinute: count(100_000).optional(),
  /** Tool calls running at once, across the tenant's sessions. */
  concurrentCalls: count(10_000).optional(),
  /** Tool calls per minute: a token bucket holding this many tokens, refilled evenly over a minute. */
  callsPerMinute: count(1_000_000).optional(),
  /**
   * Authenticated HTTP requests per minute, of any kind (a ping, tools/list, a notification, an event
   * stream, listing sessions): a token bucket as callsPerMinute's; default 1200, or twice its callsPerMinute where that is more.
   */
  requestsPerMinute: count(10_000_000).optional(),
  /** Memory of each session's container (swap off): the bounds of the container's own (backends/session-limits.ts). */
  memory: writtenSize(memorySchema).optional(),
  /** CPUs each session's container may use. */
  cpus: cpusSchema.optional(),
  /** CPUs all the tenant's session containers may use together (a quota on its CPU group); default its `cpus`. */
  totalCpus: cpusSchema.optional(),
  /** Processes and threads in each session's container. */
  pids: pidsSchema.optional(),
  /** The tenant's workspace in total; enforced by the workspace preparer (a capped filesystem, at least its smallest image), not here. */
  diskBytes: writtenSize(z.number().int().min(MIN_LOOP_IMAGE_BYTES)).optional(),
  /** Wall time of one shell command. */
  commandTimeoutSeconds: count(86_400).optional(),
  /** Wall time of one file tool call (read_file, grep_search, glob, …) in the worker threads all tenants share. */
  fileToolTimeoutSeconds: count(3_600).optional(),
  /**
   * CPUs of the server's own shared threads and converters (file tools' searches, long commands' parsing, web pages
   * turned into text) the tenant's calls may use, sustained: past it they wait for their share (admission/server-cpu.ts).
   */
  serverCpu: z.number().min(0.01).max(1024).optional(),
  /** A session with no request for this long is closed and its container removed. */
  idleSeconds: count(7 * 86_400).optional(),
  /** A session with no request and no open event stream for this long is closed: its client is gone (it never sent a DELETE). */
  abandonedSeconds: count(7 * 86_400).optional(),
  /** A session older than this is closed, busy or not. */
  maxSessionSeconds: count(30 * 86_400).optional(),
});

export type LimitsInput = z.infer<typeof limitsSchema>;
export type LimitName = keyof LimitsInput;
export const LIMIT_NAMES = Object.keys(limitsSchema.shape) as LimitName[];

/** Limits with every value filled in, sizes in bytes. */
export interface TenantLimits {
  sessions: number;
  sessionsPerMinute: number;
  concurrentCalls: number;
  callsPerMinute: number;
  requestsPerMinute: number;
  /** Bytes. */
  memory: number;
  cpus: number;
  totalCpus: number;
  pids: number;
  diskBytes: number;
  commandTimeoutSeconds: number;
  fileToolTimeoutSeconds: number;
  serverCpu: number;
  idleSeconds: number;
  abandonedSeconds: number;
  maxSessionSeconds: number;
}

/**
 * The defaults when the file says nothing: a tenant can do real work (a few
 * sessions, a build's worth of memory) but not hold a shared 2-core machine
 * alone. Sessions 4 and concurrent calls 4: an agent rarely runs more in
 * parallel. 600 calls a minute: ten a second, far above a model's pace,
 * low enough to stop a script hammering the server; twice that of requests
 * of any kind (a call is one, its client's other requests are few), since
 * each costs the event loop every tenant shares, whatever it asks for.
 * Memory 512 MiB, 1 CPU,
 * 256 pids: the sandbox's own defaults made a little tighter for sharing;
 * 1 CPU for all the tenant's sandboxes together (its `cpus` when that is
 * set): each session may use it, four busy ones share it.
 * Disk 1 GiB. Commands 10 minutes; a file tool call 30 s (a search of a
 * full 1 GiB workspace takes a few seconds; the workers are shared, so a
 * call's time is everybody's); idle 30 minutes; a session at most a day.
 * A session whose client is gone (no request, no event stream) 2 minutes:
 * clients that leave without a DELETE (the MCP Inspector's CLI does) would
 * otherwise hold a tenant's sessions for the 30 idle minutes.
 * 30 new sessions a minute: an agent opens one and keeps it; a tenant
 * opening and closing sessions in a loop starts containers for the machine.
 * A quarter of a CPU of the server's shared threads (a second of it at
 * once): a search of a large workspace runs at once, a tenant running
 * catastrophic searches or 128 KiB commands in a loop gets a quarter of a
 * CPU of them and no more.
 */
export const DEFAULT_TENANT_LIMITS: Readonly<TenantLimits> = Object.freeze({
  sessions: 4,
  sessionsPerMinute: 30,
  concurrentCalls: 4,
  callsPerMinute: 600,
  requestsPerMinute: 1200,
  memory: 512 * 1024 ** 2,
  cpus: 1,
  totalCpus: 1,
  pids: 256,
  diskBytes: 1024 ** 3,
  commandTimeoutSeconds: 600,
  fileToolTimeoutSeconds: 30,
  serverCpu: 0.25,
  idleSeconds: 1800,
  abandonedSeconds: 120,
  maxSessionSeconds: 86_400,
});

/** The tenant's limits: its own over the file's defaults over DEFAULT_TENANT_LIMITS. */
export function resolveLimits(defaults: LimitsInput | undefined, own: LimitsInput | undefined): TenantLimits {
  const merged = { ...defaults, ...own };
  const base = DEFAULT_TENANT_LIMITS;
  return {
    sessions: merged.sessions ?? base.sessions,
    sessionsPerMinute: merged.sessionsPerMinute ?? base.sessionsPerMinute,
    concurrentCalls: merged.concurrentCalls ?? base.concurrentCalls,
    callsPerMinute: merged.callsPerMinute ?? base.callsPerMinute,
    // Room for each call and as many other requests unless said: a tenant allowed more calls may make them.
    requestsPerMinute: merged.requestsPerMinute ?? Math.max(base.requestsPerMinute, 2 * (merged.callsPerMinute ?? base.callsPerMinute)),
    memory: sizeBytes(merged.memory) ?? base.memory,
    cpus: merged.cpus ?? base.cpus,
    // One sandbox's worth unless said: a tenant running four sessions gets its CPUs, not four times them.
    totalCpus: merged.totalCpus ?? merged.cpus ?? base.totalCpus,
    pids: merged.pids ?? base.pids,
    diskBytes: sizeBytes(merged.diskBytes) ?? base.diskBytes,
    commandTimeoutSeconds: merged.commandTimeoutSeconds ?? base.commandTimeoutSeconds,
    fileToolTimeoutSeconds: merged.fileToolTimeoutSeconds ?? base.fileToolTimeoutSeconds,
    serverCpu: merged.serverCpu ?? base.serverCpu,
    idleSeconds: merged.idleSeconds ?? base.idleSeconds,
    abandonedSeconds: merged.abandonedSeconds ?? base.abandonedSeconds,
    maxSessionSeconds: merged.maxSessionSeconds ?? base.maxSessionSeconds,
  };
}

/**
 * Reads `KEY=VALUE` from the command line (`--limit memory=512m`): numbers
 * as numbers, sizes kept as written. Throws an Error naming the key or the
 * value; the caller checks the result against limitsSchema.
 */
export function parseLimitAssignment(text: string): [LimitName, number | string] {
  const at = text.indexOf('=');
  const key = text.slice(0, Math.max(at, 0)).trim();
  const value = text.slice(at + 1).trim();
  if (at < 1 || value === '') throw new Error(`expected KEY=VALUE, got ${JSON.stringify(text)}`);
  if (!(LIMIT_NAMES as string[]).includes(key)) throw new Error(`unknown limit ${JSON.stringify(key)}; the limits are ${LIMIT_NAMES.join(', ')}`);
  const name = key as LimitName;
  if (name === 'memory' || name === 'diskBytes') return [name, /^\d+$/.test(value) ? Number(value) : value];
  const number = Number(value);
  if (!Number.isFinite(number)) throw new Error(`limit ${name} must be a number, got ${JSON.stringify(value)}`);
  return [name, number];
}

/** Resolved limits under the names the tenants file and `--limit` use. */
export function namedLimits(limits: TenantLimits): Record<LimitName, number | string> {
  const { memory, diskBytes, ...rest } = limits;
  return { ...rest, memory: formatSize(memory), diskBytes: formatSize(diskBytes) };
}
