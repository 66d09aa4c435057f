/**
 * The Docker backend's options, their defaults and their validation. Every
 * hardening default is on; each limit can be changed, and turning a
 * protection off has to be written out by name.
 */

/** Resource limits of one session's container. Sizes are bytes. */
export interface SandboxLimits {
  /** Memory limit; swap is disabled (MemorySwap = Memory). Default 1 GiB. */
  memoryBytes?: number;
  /** CPUs the container may use (NanoCpus). Default 1. */
  cpus?: number;
  /** Processes and threads in the container (PidsLimit). Default 256. */
  pids?: number;
  /** Size of the /tmp tmpfs (counted in the memory limit). Default 256 MiB. */
  tmpBytes?: number;
  /** Size of the home tmpfs (/home/sandbox). Default 64 MiB. */
  homeBytes?: number;
  /** RLIMIT_FSIZE: the largest file a command may write. Default 1 GiB. */
  fileSizeBytes?: number;
  /** RLIMIT_NOFILE: open files per process. Default 1024. */
  openFiles?: number;
  /**
   * How much one foreground command may grow the workspace's filesystem
   * (sampled with statvfs; exceeding it kills the command). 0: no limit.
   * Default 1 GiB.
   */
  workspaceGrowthBytes?: number;
  /** How many files (inodes) one foreground command may add to the workspace's filesystem. 0: no limit. Default 100,000. */
  workspaceGrowthFiles?: number;
}

/** Protections that are on by default; set one to false only deliberately. */
export interface SandboxHardening {
  /** Docker NetworkMode. Default `none` (no interface but loopback). */
  network?: string;
  /** Read-only root filesystem. Default true. */
  readOnlyRoot?: boolean;
  /** `no-new-privileges`: setuid binaries and file capabilities grant nothing. Default true. */
  noNewPrivileges?: boolean;
  /** Hide the workspace's `.toolcell/` state folder behind an empty read-only tmpfs. Default true. */
  hideStateDir?: boolean;
  /** Extra `SecurityOpt` entries, e.g. `seccomp=<profile JSON>` or `apparmor=<profile>`. */
  securityOpt?: string[];
}

/** Which uid/gid commands run as. */
export type SandboxUserPolicy =
  /** The workspace owner's uid/gid; the sandbox uid (10001) with ACL access when root owns the workspace. */
  | 'auto'
  /** A fixed non-root identity; no ACLs are applied. */
  | { uid: number; gid: number };

/** Options of `createDockerBackend`. */
export interface DockerBackendOptions {
  /** Image to run. Default: `toolcell-sandbox:<hash of sandbox/>` (see `sandboxImageTag`). */
  image?: string;
  limits?: SandboxLimits;
  hardening?: SandboxHardening;
  /** OCI runtime, e.g. `runsc` for gVisor. Default: the engine's default (runc). */
  runtime?: string;
  /** Docker engine socket. Default: DOCKER_HOST, else /var/run/docker.sock. */
  socketPath?: string;
  user?: SandboxUserPolicy;
  /** Grant the sandbox uid access to a root-owned workspace with POSIX ACLs. Default true. */
  grantWorkspaceAcl?: boolean;
  /** Containers kept pre-started per workspace so a new session starts fast. Default 1. */
  warmPool?: number;
  /** Start a spare container for this workspace at once. */
  prewarmWorkspace?: string;
  /** Remove containers left by dead toolcell processes at start-up. Default true. */
  removeLeftovers?: boolean;
  /** Time allowed for a container to start and its supervisor to answer. Default 30 s. */
  startTimeoutMs?: number;
  /** Build the sandbox image when it is missing (progress on stderr) instead of failing with `sandbox_image_missing`. Default false. */
  buildIfMissing?: boolean;
}

export interface ResolvedLimits {
  memoryBytes: number;
  cpus: number;
  pids: number;
  tmpBytes: number;
  homeBytes: number;
  fileSizeBytes: number;
  openFiles: number;
  workspaceGrowthBytes: number;
  workspaceGrowthFiles: number;
}

export interface ResolvedHardening {
  network: string;
  readOnlyRoot: boolean;
  noNewPrivileges: boolean;
  hideStateDir: boolean;
  securityOpt: string[];
}

export interface ResolvedDockerBackendOptions {
  image: string | undefined;
  limits: ResolvedLimits;
  hardening: ResolvedHardening;
  runtime: string | undefined;
  socketPath: string | undefined;
  user: SandboxUserPolicy;
  grantWorkspaceAcl: boolean;
  warmPool: number;
  prewarmWorkspace: string | undefined;
  removeLeftovers: boolean;
  startTimeoutMs: number;
  buildIfMissing: boolean;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export const DEFAULT_LIMITS: Readonly<ResolvedLimits> = Object.freeze({
  memoryBytes: 1 * GiB,
  cpus: 1,
  pids: 256,
  tmpBytes: 256 * MiB,
  homeBytes: 64 * MiB,
  fileSizeBytes: 1 * GiB,
  openFiles: 1024,
  workspaceGrowthBytes: 1 * GiB,
  workspaceGrowthFiles: 100_000,
});

const LIMIT_RANGES: Record<keyof ResolvedLimits, [min: number, max: number, integer: boolean]> = {
  memoryBytes: [16 * MiB, 1024 * GiB, true],
  cpus: [0.01, 1024, false],
  pids: [16, 1_000_000, true],
  tmpBytes: [1 * MiB, 1024 * GiB, true],
  homeBytes: [1 * MiB, 1024 * GiB, true],
  fileSizeBytes: [1 * MiB, 2 ** 53, true],
  openFiles: [64, 1_048_576, true],
  workspaceGrowthBytes: [0, 2 ** 53, true],
  workspaceGrowthFiles: [0, 2 ** 32, true],
};

function checkObject(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${name} must be an object`);
  }
  return value as Record<string, unknown>;
}

function checkKnownKeys(input: Record<string, unknown>, known: readonly string[], name: string): void {
  for (const key of Object.keys(input)) {
    if (!known.includes(key)) throw new TypeError(`${name}.${key} is not a known option`);
  }
}

function checkBoolean(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean`);
  return value;
}

function checkString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${name} must be a non-empty string`);
  return value;
}

function checkInteger(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`${name} must be an integer`);
  if (value < min || value > max) throw new RangeError(`${name} must be between ${min} and ${max}`);
  return value;
}

function resolveLimits(value: unknown): ResolvedLimits {
  if (value === undefined) return { ...DEFAULT_LIMITS };
  const input = checkObject(value, 'options.limits');
  const limits = { ...DEFAULT_LIMITS };
  checkKnownKeys(input, Object.keys(LIMIT_RANGES), 'options.limits');
  for (const key of Object.keys(LIMIT_RANGES) as Array<keyof ResolvedLimits>) {
    const raw = input[key];
    if (raw === undefined) continue;
    const [min, max, integer] = LIMIT_RANGES[key];
    const name = `options.limits.${key}`;
    if (typeof raw !== 'number' || !Number.isFinite(raw)) throw new TypeError(`${name} must be a number`);
    if (integer && !Number.isInteger(raw)) throw new TypeError(`${name} must be an integer`);
    if (raw < min || raw > max) throw new RangeError(`${name} must be between ${min} and ${max}`);
    limits[key] = raw;
  }
  return limits;
}

function resolveHardening(value: unknown): ResolvedHardening {
  const input = value === undefined ? {} : checkObject(value, 'options.hardening');
  checkKnownKeys(input, ['network', 'readOnlyRoot', 'noNewPrivileges', 'hideStateDir', 'securityOpt'], 'options.hardening');
  const securityOpt = input['securityOpt'] ?? [];
  if (!Array.isArray(securityOpt) || securityOpt.some((entry) => typeof entry !== 'string' || entry.length === 0)) {
    throw new TypeError('options.hardening.securityOpt must be an array of non-empty strings');
  }
  if (securityOpt.some((entry: string) => /^no-new-privileges/.test(entry))) {
    throw new TypeError('options.hardening.securityOpt: use options.hardening.noNewPrivileges instead of no-new-privileges');
  }
  return {
    network: checkString(input['network'], 'options.hardening.network') ?? 'none',
    readOnlyRoot: checkBoolean(input['readOnlyRoot'], 'options.hardening.readOnlyRoot', true),
    noNewPrivileges: checkBoolean(input['noNewPrivileges'], 'options.hardening.noNewPrivileges', true),
    hideStateDir: checkBoolean(input['hideStateDir'], 'options.hardening.hideStateDir', true),
    securityOpt: [...(securityOpt as string[])],
  };
}

function resolveUser(value: unknown): SandboxUserPolicy {
  if (value === undefined || value === 'auto') return 'auto';
  if (typeof value === 'string') throw new TypeError("options.user must be 'auto' or {uid, gid}");
  const input = checkObject(value, 'options.user');
  checkKnownKeys(input, ['uid', 'gid'], 'options.user');
  const uid = checkInteger(input['uid'], 'options.user.uid', 1, 2 ** 31 - 2, -1);
  const gid = checkInteger(input['gid'], 'options.user.gid', 1, 2 ** 31 - 2, -1);
  if (uid < 0) throw new TypeError('options.user.uid is required (a non-root uid)');
  if (gid < 0) throw new TypeError('options.user.gid is required (a non-root gid)');
  return { uid, gid };
}

const KNOWN_OPTIONS = [
  'image',
  'limits',
  'hardening',
  'runtime',
  'socketPath',
  'user',
  'grantWorkspaceAcl',
  'warmPool',
  'prewarmWorkspace',
  'removeLeftovers',
  'startTimeoutMs',
  'buildIfMissing',
] as const satisfies ReadonlyArray<keyof DockerBackendOptions>;

/** Validates options and fills defaults. Throws TypeError/RangeError naming the bad option. */
export function resolveDockerBackendOptions(options: DockerBackendOptions | undefined): ResolvedDockerBackendOptions {
  const input = options === undefined ? {} : checkObject(options, 'options');
  checkKnownKeys(input, KNOWN_OPTIONS, 'options');
  const runtime = checkString(input['runtime'], 'options.runtime');
  if (runtime !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(runtime)) {
    throw new TypeError('options.runtime must be a runtime name such as runsc');
  }
  const prewarmWorkspace = checkString(input['prewarmWorkspace'], 'options.prewarmWorkspace');
  if (prewarmWorkspace !== undefined && !prewarmWorkspace.startsWith('/')) {
    throw new TypeError('options.prewarmWorkspace must be an absolute path');
  }
  return {
    image: checkString(input['image'], 'options.image'),
    limits: resolveLimits(input['limits']),
    hardening: resolveHardening(input['hardening']),
    runtime,
    socketPath: checkString(input['socketPath'], 'options.socketPath'),
    user: resolveUser(input['user']),
    grantWorkspaceAcl: checkBoolean(input['grantWorkspaceAcl'], 'options.grantWorkspaceAcl', true),
    warmPool: checkInteger(input['warmPool'], 'options.warmPool', 0, 8, 1),
    prewarmWorkspace,
    removeLeftovers: checkBoolean(input['removeLeftovers'], 'options.removeLeftovers', true),
    startTimeoutMs: checkInteger(input['startTimeoutMs'], 'options.startTimeoutMs', 100, 600_000, 30_000),
    buildIfMissing: checkBoolean(input['buildIfMissing'], 'options.buildIfMissing', false),
  };
}
