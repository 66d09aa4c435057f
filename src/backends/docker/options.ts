import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';
import { cpuListSchema } from '../../contracts/cpu-list.js';
import { sandboxRuntimeSchema } from '../../contracts/sandbox-runtime.js';
import { allowListEntriesSchema } from '../../egress/allow-list-schema.js';
import type { EgressEvent } from '../../egress/egress-event.js';
import { cpusSchema, memorySchema, pidsSchema } from '../session-limits.js';

/**
 * The Docker backend's options, their defaults and their validation, in one
 * zod schema: every hardening default is on; each limit can be changed, and
 * turning a protection off has to be written out by name. Unknown keys are
 * refused (a misspelt limit must not silently leave the default in place).
 */

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** An integer option within [min, max], with its default. */
function bounded(min: number, max: number, fallback: number) {
  return z.number().int().min(min).max(max).default(fallback);
}

/** Resource limits of one session's container. Sizes are bytes. */
const limitsSchema = z
  .strictObject({
    /** Memory limit; swap is disabled (MemorySwap = Memory). Default 1 GiB. A session may set its own (`openSession`'s `limits`). */
    memory: memorySchema.default(1 * GiB),
    /** CPUs the container may use (NanoCpus). Default 1. */
    cpus: cpusSchema.default(1),
    /** Processes and threads in the container (PidsLimit). Default 256. */
    pids: pidsSchema.default(256),
    /** Size of the /tmp tmpfs (counted in the memory limit). Default 256 MiB. */
    tmpBytes: bounded(1 * MiB, 1024 * GiB, 256 * MiB),
    /** Size of the home tmpfs (/home/sandbox). Default 64 MiB. */
    homeBytes: bounded(1 * MiB, 1024 * GiB, 64 * MiB),
    /** RLIMIT_FSIZE: the largest file a command may write. Default 1 GiB. */
    fileSizeBytes: bounded(1 * MiB, Number.MAX_SAFE_INTEGER, 1 * GiB),
    /** RLIMIT_NOFILE: open files per process. Default 1024. */
    openFiles: bounded(64, 1_048_576, 1024),
    /**
     * How much one foreground command may grow the workspace's filesystem
     * (sampled with statvfs; exceeding it kills the command). 0: no limit.
     * Default 1 GiB.
     */
    workspaceGrowthBytes: bounded(0, Number.MAX_SAFE_INTEGER, 1 * GiB),
    /** How many files (inodes) one foreground command may add to the workspace's filesystem. 0: no limit. Default 100,000. */
    workspaceGrowthFiles: bounded(0, 2 ** 32, 100_000),
  })
  .prefault({});

/** Protections that are on by default; set one to false only deliberately. */
const hardeningSchema = z
  .strictObject({
    /** Docker NetworkMode. Default `none` (no interface but loopback). */
    network: z.string().min(1).default('none'),
    /** Read-only root filesystem. Default true. */
    readOnlyRoot: z.boolean().default(true),
    /** `no-new-privileges`: setuid binaries and file capabilities grant nothing. Default true. */
    noNewPrivileges: z.boolean().default(true),
    /** Hide the workspace's `.toolcell/` state folder behind an empty read-only tmpfs. Default true. */
    hideStateDir: z.boolean().default(true),
    /** Extra `SecurityOpt` entries, e.g. `seccomp=<profile JSON>` or `apparmor=<profile>`. */
    securityOpt: z
      .array(z.string().min(1))
      // Turning no-new-privileges off has one switch, so that it is visible by name.
      .refine((entries) => !entries.some((entry) => entry.startsWith('no-new-privileges')), {
        error: 'must not hold no-new-privileges: use options.hardening.noNewPrivileges',
      })
      .default([]),
  })
  .prefault({});

/** A non-root uid or gid. */
const idSchema = z
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 2);

/**
 * Which uid/gid commands run as: `'auto'` (the workspace root folder's
 * owner, root included), or a fixed non-root identity. Nothing in the
 * workspace has its owner, mode or ACLs changed either way.
 */
const userSchema = z.union([z.literal('auto'), z.strictObject({ uid: idSchema, gid: idSchema })], { error: "must be 'auto' or {uid, gid}" }).default('auto');

/**
 * Egress through toolcell's proxy instead of no network (settings'
 * `sandbox.network: {allow}`): see egress-network.ts.
 */
const egressSchema = z.strictObject({
  /** Host names, `*.domain`s, IP addresses and CIDR ranges, each with an optional `:port`. */
  allow: allowListEntriesSchema((problem) => `must hold valid entries: ${problem}`),
  /** Names the proxy resolves from this map instead of DNS, e.g. `{"allowed.test": "172.17.0.1"}` (tests; pinning names). */
  hosts: z.record(z.string().min(1), z.union([z.string().min(1), z.array(z.string().min(1))])).optional(),
  /** Append every allowed and refused connection, one JSON object a line, to this file. */
  logFile: z
    .string()
    .refine((path) => path.startsWith('/'), { error: 'must be an absolute path' })
    .optional(),
  /** How the proxy's refusals name the list (a hosting tenant's is not in settings); default `sandbox.network.allow`. */
  wording: z.strictObject({ list: z.string().min(1).max(200) }).optional(),
  /** Called for every connection the proxy allows or refuses. */
  onEvent: z.custom<(event: EgressEvent) => void>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
});

/** The options of `createDockerBackend`, their bounds and defaults. */
export const dockerBackendOptionsSchema = z
  .strictObject({
    /** Image to run. Default: `toolcell-sandbox:<hash of sandbox/>` (see `sandboxImageTag`). */
    image: z.string().min(1).optional(),
    limits: limitsSchema,
    hardening: hardeningSchema,
    /**
     * OCI runtime, e.g. `runsc` for gVisor (a session may name its own:
     * `SessionLimits.runtime`). Default: the engine's default (runc). A name
     * the engine does not know is refused when the backend is created.
     */
    runtime: sandboxRuntimeSchema.optional(),
    /**
     * The CPUs every sandbox container may run on (`HostConfig.CpusetCpus`),
     * as Linux lists them: `1`, `2-3`, `0,2-5`. Keeps commands off the CPUs
     * a server needs for itself (`serve --sandbox-cpus`). A CPU the engine's
     * machine does not offer fails each container start (`sandbox_unavailable`,
     * naming the CPUs it has): only the engine knows its machine. Default: any.
     */
    cpuSet: cpuListSchema.optional(),
    /** Let commands reach listed hosts through the egress proxy. Default: no network (`hardening.network` `none`). */
    egress: egressSchema.optional(),
    /** Docker engine socket. Default: DOCKER_HOST, else /var/run/docker.sock. */
    socketPath: z.string().min(1).optional(),
    user: userSchema,
    /** Containers kept pre-started per workspace so a new session starts fast. Default 1. */
    warmPool: bounded(0, 8, 1),
    /** Start a spare container for this workspace at once. */
    prewarmWorkspace: z
      .string()
      .refine((path) => path.startsWith('/'), { error: 'must be an absolute path' })
      .optional(),
    /** Remove containers left by dead toolcell processes at start-up. Default true. */
    removeLeftovers: z.boolean().default(true),
    /**
     * Containers started at once; more wait their turn, in order (a burst of
     * sessions then gets its first containers early instead of all of them
     * late). Default 4.
     */
    maxConcurrentStarts: bounded(1, 64, 4),
    /** Time allowed for a container to start and its supervisor to answer (not counting its wait for a turn). Default 30 s. */
    startTimeoutMs: bounded(100, 600_000, 30_000),
    /** Build the sandbox image when it is missing (progress on stderr) instead of failing with `sandbox_image_missing`. Default false. */
    buildIfMissing: z.boolean().default(false),
    /**
     * The text of a Dockerfile built FROM `image` (custom-image.ts): sessions
     * run its result, `toolcell-custom:<hash of the base image and the file>`,
     * built on first use when `buildIfMissing`, else it must exist. The
     * hardening and the supervisor stay toolcell's whatever it adds.
     */
    dockerfile: z
      .string()
      .min(1)
      .max(64 * 1024)
      .optional(),
    /** What a missing custom image's error tells to run (e.g. `toolcell tenant image build acme`). */
    dockerfileBuildHint: z.string().optional(),
    /** Build `dockerfile`'s image when it is missing. Default: as `buildIfMissing`. A hosting server never builds a tenant's (its operator does). */
    buildDockerfile: z.boolean().optional(),
  })
  // Egress is its own network: a second way to name one would leave it unclear which applies.
  .refine((options) => options.egress === undefined || options.hardening.network === 'none', {
    error: 'must not be combined with hardening.network: egress brings its own network',
    path: ['egress'],
  });

/** Options of `createDockerBackend`; every field is optional. */
export type DockerBackendOptions = z.input<typeof dockerBackendOptionsSchema>;
/** The options with every default filled in. */
export type ResolvedDockerBackendOptions = z.output<typeof dockerBackendOptionsSchema>;
export type SandboxLimits = z.input<typeof limitsSchema>;
export type SandboxHardening = z.input<typeof hardeningSchema>;
export type SandboxUserPolicy = z.output<typeof userSchema>;
export type ResolvedLimits = ResolvedDockerBackendOptions['limits'];
export type ResolvedHardening = ResolvedDockerBackendOptions['hardening'];

export const DEFAULT_LIMITS: Readonly<ResolvedLimits> = Object.freeze(limitsSchema.parse(undefined));

/** Validates options and fills defaults. Throws TypeError/RangeError naming the bad option. */
export function resolveDockerBackendOptions(options: DockerBackendOptions | undefined): ResolvedDockerBackendOptions {
  return parseOptions(dockerBackendOptionsSchema, options, 'createDockerBackend');
}
