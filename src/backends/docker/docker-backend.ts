import { z } from 'zod';
import { randomBytes } from 'node:crypto';
import { isAbsolute } from 'node:path';
import type Docker from 'dockerode';
import type { ShellBackend, ShellSession } from '../backend.js';
import { ToolcellError, ToolErrorType } from '../../errors.js';
import { removeBackendContainers } from './cleanup.js';
import { SandboxContainer } from './container.js';
import { DockerSession, sessionSlug, type SessionContainer } from './docker-session.js';
import { createEngineClient, engineUnavailableError, type EngineOptions } from './engine.js';
import { PlainBuildLog } from './build-progress.js';
import { EgressNetwork } from './egress-network.js';
import { ensureSandboxImage } from './ensure-image.js';
import { ensureCustomImage } from './custom-image.js';
import { buildContainerSpec } from './hardening.js';
import { LABELS, ownerLabels } from './labels.js';
import { removeLeftovers } from './leftovers.js';
import { resolveDockerBackendOptions, type DockerBackendOptions, type ResolvedDockerBackendOptions } from './options.js';
import type { PinnedDirectory } from './pinned-dir.js';
import { PRIVATE_MOUNT_ROOT, PrivateMounts } from './private-mounts.js';
import { awaitEngine } from './probe.js';
import { cpuGroupCgroup, sessionLimitsSchema, type SessionLimits } from '../session-limits.js';
import { parseOptions } from '../../contracts/parse-options.js';

// The shell thread loads this module by URL and needs both entry points here.
export { probeDocker, type DockerProbe } from './probe.js';
import { StartLimiter } from './start-limiter.js';
import { WarmPool, type EffectiveSessionLimits } from './warm-pool.js';
import { prepareWorkspace, type PreparedWorkspace, type WorkspacePin } from './workspace-dirs.js';
import { RuntimeCatalog } from './runtimes.js';
import { capCpuGroup } from './cpu-group-quota.js';

const absolutePath = z.string().refine((path) => isAbsolute(path), { error: 'must be an absolute path' });

/** What `openSession` is given; `limits` are checked apart, over the backend's (#effectiveLimits). */
const openSessionSchema = z.object({
  sessionId: z.string().min(1).max(200),
  workspaceRoot: absolutePath,
  limits: z.unknown().optional(),
  signal: z.instanceof(AbortSignal).optional(),
});

const prewarmSchema = z.object({ workspaceRoot: absolutePath });

/** The Docker backend: a ShellBackend plus what a host may want to know or do ahead of time. */
export interface DockerShellBackend extends ShellBackend {
  readonly kind: 'docker';
  /** The image sessions run. */
  readonly image: string;
  /** Value of the `dev.toolcell.backend` label on this backend's containers. */
  readonly backendId: string;
  /** Starts spare containers for a workspace (and these container limits, default the backend's) now, so its first session opens fast. */
  prewarm(workspaceRoot: string, limits?: SessionLimits): void;
  [Symbol.asyncDispose](): Promise<void>;
}

class DockerBackend implements DockerShellBackend {
  readonly kind = 'docker' as const;
  readonly image: string;
  readonly backendId: string;
  readonly #docker: Docker;
  readonly #engine: EngineOptions;
  readonly #options: ResolvedDockerBackendOptions;
  readonly #pool: WarmPool;
  readonly #mounts = new PrivateMounts({ enabled: true });
  /** Each workspace as first resolved: later containers must mount the same folder. */
  readonly #pins = new Map<string, WorkspacePin>();
  readonly #sessions = new Map<string, DockerSession>();
  /** The CPU groups that could not be capped, each said once (#capCpuGroup). */
  readonly #cpuGroupProblems = new Set<string>();
  readonly #egress: EgressNetwork | undefined;
  readonly #starts: StartLimiter;
  readonly #runtimes: RuntimeCatalog;
  /** The engine's default runtime, for descriptions. */
  readonly #defaultRuntime: string;
  /** Variables the image's ENV sets: blanked for the supervisor (hardening.ts). */
  readonly #imageEnv: string[];
  #closing: Promise<void> | undefined;

  constructor(input: {
    docker: Docker;
    engine: EngineOptions;
    options: ResolvedDockerBackendOptions;
    image: string;
    imageEnv: string[];
    backendId: string;
    runtimes: RuntimeCatalog;
    defaultRuntime: string;
    egress?: EgressNetwork;
  }) {
    this.#imageEnv = input.imageEnv;
    this.backendId = input.backendId;
    this.#runtimes = input.runtimes;
    this.#defaultRuntime = input.defaultRuntime;
    this.#egress = input.egress;
    this.#docker = input.docker;
    this.#engine = input.engine;
    this.#options = input.options;
    this.image = input.image;
    this.#starts = new StartLimiter(input.options.maxConcurrentStarts);
    this.#pool = new WarmPool({ size: input.options.warmPool, start: (root, limits, signal) => this.#startContainer(root, { limits, signal }) });
  }

  describe(limits?: SessionLimits): string {
    return `docker (${this.image}, runtime ${this.runtimeOf(limits)})`;
  }

  runtimeOf(limits?: SessionLimits): string {
    return limits?.runtime ?? this.#options.runtime ?? this.#defaultRuntime;
  }

  prewarm(workspaceRoot: string, limits?: SessionLimits): void {
    const checked = parseOptions(prewarmSchema, { workspaceRoot }, 'prewarm');
    this.#pool.fill(checked.workspaceRoot, this.#effectiveLimits(limits, 'prewarm'));
  }

  async openSession(options: { sessionId: string; workspaceRoot: string; limits?: SessionLimits; signal?: AbortSignal }): Promise<ShellSession> {
    const { sessionId, workspaceRoot, signal } = parseOptions(openSessionSchema, options, 'openSession');
    const limits = this.#effectiveLimits(options.limits, 'openSession');
    this.#assertOpen();
    // A runtime the engine lacks is refused here, before any container start is tried.
    await this.#runtimes.resolve(limits.runtime, { egress: this.#egress !== undefined });
    if (this.#sessions.has(sessionId)) throw new TypeError(`openSession: session ${sessionId} is already open`);
    const container = await this.#pool.take(workspaceRoot, limits, signal);
    if (this.#closing || this.#sessions.has(sessionId) || signal?.aborted) {
      await container.container.remove();
      this.#assertOpen();
      if (signal?.aborted) throw new ToolcellError(ToolErrorType.CANCELLED, 'The sandbox container start was cancelled.');
      throw new TypeError(`openSession: session ${sessionId} is already open`);
    }
    void container.container.rename(`toolcell-${sessionSlug(sessionId)}-${container.container.shortId}`);
    const session = new DockerSession({
      id: sessionId,
      container,
      // A replacement container (the first one died) keeps the session's limits.
      replace: () => this.#startContainer(workspaceRoot, { sessionId, limits }),
      ...(this.#egress ? { egress: this.#egress } : {}),
      onClose: () => {
        if (this.#sessions.get(sessionId) === session) this.#sessions.delete(sessionId);
      },
    });
    this.#sessions.set(sessionId, session);
    return session;
  }

  /** The backend's memory/CPU/pids limits with the session's own over them; TypeError/RangeError naming a bad one. */
  #effectiveLimits(raw: SessionLimits | undefined, where: string): EffectiveSessionLimits {
    const own = parseOptions(sessionLimitsSchema, raw, `${where}: limits`);
    const base = this.#options.limits;
    const runtime = own.runtime ?? this.#options.runtime;
    const cpus = own.cpus ?? base.cpus;
    const groupCpus = own.cpuGroup !== undefined ? own.cpuGroupCpus : undefined;
    return {
      memory: own.memory ?? base.memory,
      // No more than the group's total: one container could not use more, and cgroup v1 refuses a group quota below a member's.
      cpus: groupCpus !== undefined ? Math.min(cpus, groupCpus) : cpus,
      pids: own.pids ?? base.pids,
      ...(own.cpuGroup !== undefined ? { cpuGroup: own.cpuGroup } : {}),
      ...(groupCpus !== undefined ? { cpuGroupCpus: groupCpus } : {}),
      ...(own.user !== undefined ? { user: own.user } : {}),
      ...(runtime !== undefined ? { runtime } : {}),
    };
  }

  #assertOpen(): void {
    if (this.#closing) throw new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, 'The Docker sandbox backend is closed.');
  }

  #startContainer(workspaceRoot: string, input: { sessionId?: string; limits: EffectiveSessionLimits; signal?: AbortSignal }): Promise<SessionContainer> {
    return this.#starts.run(() => this.#startMountedContainer(workspaceRoot, input), input.signal);
  }

  async #startMountedContainer(
    workspaceRoot: string,
    input: { sessionId?: string; limits: EffectiveSessionLimits; signal?: AbortSignal },
  ): Promise<SessionContainer> {
    try {
      return await this.#startCheckedContainer(workspaceRoot, input);
    } catch (error) {
      // An engine in another mount namespace (toolcell itself in a container) cannot see the
      // private mount points: from then on the checks in the container are the guard. Only the
      // engine's own words say so: any other failure naming a mount point (a start raced by a
      // closing backend or a removed workspace) is that start's, and must not switch them off for
      // every later one (under gVisor that would refuse every later session).
      if (!this.#mounts.available || !engineCannotSeePrivateMounts(error)) throw error;
      this.#mounts.disable();
      return this.#startCheckedContainer(workspaceRoot, input);
    }
  }

  async #startCheckedContainer(
    workspaceRoot: string,
    input: { sessionId?: string; limits: EffectiveSessionLimits; signal?: AbortSignal },
  ): Promise<SessionContainer> {
    const { sessionId, signal } = input;
    const { cpuGroup, cpuGroupCpus, user, runtime: runtimeName, ...limits } = input.limits;
    const options = { ...this.#options, limits: { ...this.#options.limits, ...limits } };
    const runtime = await this.#runtimes.resolve(runtimeName, { egress: this.#egress !== undefined });
    const socket = this.#engine.socketPath ?? unixSocketOf(process.env['DOCKER_HOST']);
    const pin = this.#pins.get(workspaceRoot);
    const prepared = await prepareWorkspace({
      workspaceRoot,
      ...(pin !== undefined ? { pin } : {}),
      user: user ?? options.user,
      mounts: this.#mounts,
      ...(socket !== undefined ? { engineSocket: socket } : {}),
    });
    if (pin === undefined) this.#pins.set(workspaceRoot, prepared.pin);
    const extra: Record<string, string> = { [LABELS.backend]: this.backendId, [LABELS.workspace]: prepared.root };
    if (sessionId !== undefined) extra[LABELS.session] = sessionId;
    const spec = buildContainerSpec({
      image: this.image,
      imageEnv: this.#imageEnv,
      options,
      identity: prepared.identity,
      workspace: prepared,
      labels: ownerLabels(extra),
      ...(this.#egress ? { egressNetwork: this.#egress.name } : {}),
      ...(cpuGroup !== undefined ? { cgroupParent: cpuGroupCgroup(cpuGroup) } : {}),
      ...(runtime.engineName !== undefined ? { runtime: { name: runtime.engineName, gvisor: runtime.gvisor } } : {}),
    });
    // A spare is renamed `toolcell-<session>-<id>` when a session adopts it (openSession).
    const name = `toolcell-${sessionId !== undefined ? sessionSlug(sessionId) : 'spare'}-${randomBytes(6).toString('hex')}`;
    const { key } = prepared.background;
    let logs: PinnedDirectory | undefined;
    const dropLogFolder = async (): Promise<void> => {
      // An empty log folder (a spare, or a session without background jobs) goes with its container.
      const parent = logs ?? (await prepared.release());
      await parent.removeEmptyChild(key);
      await parent.close();
    };
    try {
      // Before the start too: a total raised since the group's last start must be in place for a container with the new cpus.
      if (cpuGroup !== undefined && cpuGroupCpus !== undefined) await capCpuGroup({ group: cpuGroup, cpus: cpuGroupCpus });
      const refusal = runtime.gvisor ? gvisorRefusal(prepared) : undefined;
      if (refusal !== undefined) throw new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, refusal);
      const container = await SandboxContainer.start({
        docker: this.#docker,
        engine: this.#engine,
        spec,
        name,
        timeoutMs: options.startTimeoutMs,
        onRemoved: dropLogFolder,
        ...(signal ? { signal } : {}),
      });
      // One inspection of the new container, for both what needs it (its process, its address).
      let inspection: Promise<Docker.ContainerInspectInfo> | undefined;
      const inspect = () => (inspection ??= this.#docker.getContainer(container.id).inspect());
      if (cpuGroup !== undefined && cpuGroupCpus !== undefined) await this.#capCpuGroup(inspect, cpuGroup, cpuGroupCpus);
      const address = this.#egress ? await this.#egressAddress(container, inspect) : undefined;
      return { container, backgroundDir: prepared.background.hostPath, ...(address !== undefined ? { address } : {}) };
    } catch (error) {
      await dropLogFolder();
      throw error;
    } finally {
      logs = await prepared.release();
    }
  }

  /**
   * The group's CPU ceiling, written at each of its containers' starts. Where
   * it cannot be (toolcell in a container of its own, say), the session
   * still starts, with the group's share alone, and the reason is a process
   * warning once per group (TOOLCELL_CPU_GROUP), not a failure for every session.
   */
  async #capCpuGroup(inspect: () => Promise<Docker.ContainerInspectInfo>, group: string, cpus: number): Promise<void> {
    const pid = await inspect().then(
      (info) => info.State?.Pid,
      () => undefined,
    );
    const problem = pid ? await capCpuGroup({ pid, group, cpus }) : 'the engine did not say which process runs it';
    if (problem === undefined || this.#cpuGroupProblems.has(group)) return;
    this.#cpuGroupProblems.add(group);
    process.emitWarning(`cannot cap the CPU of group ${group}'s containers together at ${cpus} (each container keeps its own cap): ${problem}`, {
      code: 'TOOLCELL_CPU_GROUP',
    });
  }

  /** The container's address on the egress network: how the proxy tells whose connection it refused. */
  async #egressAddress(container: SandboxContainer, inspect: () => Promise<Docker.ContainerInspectInfo>): Promise<string> {
    try {
      const info = await inspect();
      const address = info.NetworkSettings.Networks[this.#egress!.name]?.IPAddress;
      if (address) return address;
      throw new Error(`it has no address on ${this.#egress!.name}`);
    } catch (error) {
      await container.remove();
      throw new ToolcellError(ToolErrorType.SANDBOX_UNAVAILABLE, `Cannot read the sandbox container's network address: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#sessions.values()].map((session) => session.close()));
      await this.#pool.close();
      // Anything a race left behind (a spare adopted while closing, say).
      await removeBackendContainers(this.#docker, this.backendId).catch(() => undefined);
      await this.#egress?.close();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * The names the image's ENV sets, for the container spec to blank (the
 * supervisor runs as container root: an image's LD_PRELOAD or PYTHONPATH
 * must not reach it). Refuses an image that declares a VOLUME: each
 * container would get writable storage outside its read-only root, with no
 * size limit.
 */
async function imageEnvironmentNames(docker: Docker, image: string): Promise<string[]> {
  const info = (await docker.getImage(image).inspect()) as { Config?: { Env?: string[] | null; Volumes?: Record<string, unknown> | null } };
  const volumes = Object.keys(info.Config?.Volumes ?? {});
  if (volumes.length > 0) {
    throw new ToolcellError(
      ToolErrorType.SANDBOX_UNAVAILABLE,
      `The sandbox image ${image} declares VOLUME ${volumes.join(', ')}: a volume would be writable storage outside the read-only root, with no size limit; use an image without one.`,
    );
  }
  return (info.Config?.Env ?? []).map((entry) => entry.split('=', 1)[0]!).filter((name) => name.length > 0);
}

/** The path of a `unix://` DOCKER_HOST. */
function unixSocketOf(dockerHost: string | undefined): string | undefined {
  return dockerHost?.startsWith('unix://') ? dockerHost.slice('unix://'.length) : undefined;
}

/**
 * Why a workspace cannot be mounted into a gVisor container, or undefined.
 * gVisor shows its own device and inode numbers, so the supervisor cannot
 * check that the engine mounted the very folders the host checked (the swap
 * race of workspace-dirs.ts): under gVisor the mounts must be private mount
 * points made from the checked descriptors (root on the engine's host).
 *
 * Nor may commands run as uid 0 there (a workspace root owns). Under runc a
 * uid-0 command without capabilities cannot reach docker-init (pid 1, uid
 * 0) nor the supervisor (effective uid 0): Linux drops SIGKILL to a
 * namespace's init and refuses /proc/<pid>/fd of a process holding
 * capabilities the caller lacks. gVisor (Debian's runsc, 2022) does
 * neither: a uid-0 command could open init's stdin and stdout, which are
 * the supervisor's protocol stream from and to the host (read the host's
 * frames, kill ones included, so its call outlives its limits; write frames
 * of its own), and SIGKILL init, ending the container. Measured; the
 * refusal is tested in test/backends/docker/runtimes.test.ts.
 */
/** dockerd's answer to a bind source it cannot find, for one of our private mount points. */
function engineCannotSeePrivateMounts(error: unknown): boolean {
  const message = String((error as Error | undefined)?.message ?? error);
  return /bind source path does not exist/i.test(message) && message.includes(`${PRIVATE_MOUNT_ROOT}/`);
}

function gvisorRefusal(prepared: PreparedWorkspace): string | undefined {
  const sources = [prepared.workspace.source, prepared.background.source];
  if (!sources.every((source) => source.startsWith(`${PRIVATE_MOUNT_ROOT}/`)))
    return (
      'Under gVisor (runsc) toolcell must mount the workspace from a folder it opened itself, which needs root on the Docker host ' +
      '(gVisor hides the host inode numbers the sandbox otherwise checks the mount with): run toolcell as root, or use the runc runtime.'
    );
  if (prepared.identity.uid === 0)
    return (
      `The workspace ${prepared.root} belongs to root, so its commands would run as uid 0, which gVisor (runsc) does not keep away from ` +
      "the sandbox's init and supervisor as Linux does: use a workspace owned by a non-root user (commands then run as that user), or the runc runtime."
    );
  return undefined;
}

/**
 * Creates the hardened Docker backend. Checks, in order: the options
 * (TypeError/RangeError naming the bad one), the engine (`sandbox_unavailable`
 * with how to start it), the image (`sandbox_image_missing` with the command
 * that builds it, or a build when `buildIfMissing`), the runtime when one is
 * named (`sandbox_unavailable` saying how to set it up); then removes containers left by dead toolcell processes and
 * pre-starts a spare for `prewarmWorkspace`. Runs in the shell data-plane
 * thread; `close()` removes every container it created.
 */
export async function createDockerBackend(options: DockerBackendOptions = {}): Promise<DockerShellBackend> {
  const resolved = resolveDockerBackendOptions(options);
  const engine: EngineOptions = resolved.socketPath !== undefined ? { socketPath: resolved.socketPath } : {};
  // stderr, as the image build's lines below: stdout may be a protocol (serve --stdio) or JSON (exec --json).
  const probe = await awaitEngine({ ...engine, onSlow: (reason) => process.stderr.write(`toolcell: ${reason}\n`) });
  if (!probe.available) throw engineUnavailableError(probe.reason ?? 'The Docker engine does not answer');
  // A first-use build reports on stderr as plain lines: this runs in the
  // shell thread, whose stderr is never a terminal, and stdout may be a
  // protocol (serve --stdio) or JSON (exec --json).
  const log = new PlainBuildLog({ write: (line) => process.stderr.write(`toolcell: sandbox image: ${line}\n`) });
  let image: string;
  try {
    image = await ensureSandboxImage({
      ...engine,
      ...(resolved.image !== undefined ? { image: resolved.image } : {}),
      build: resolved.buildIfMissing,
      onProgress: (event) => log.event(event),
    });
  } catch (error) {
    for (const line of log.tail()) process.stderr.write(`toolcell: sandbox image: | ${line}\n`);
    throw error;
  }
  if (resolved.dockerfile !== undefined) {
    try {
      image = await ensureCustomImage({
        ...engine,
        base: image,
        dockerfile: resolved.dockerfile,
        build: resolved.buildDockerfile ?? resolved.buildIfMissing,
        ...(resolved.dockerfileBuildHint ? { howToBuild: resolved.dockerfileBuildHint } : {}),
        onProgress: (event) => log.event(event),
      });
    } catch (error) {
      for (const line of log.tail()) process.stderr.write(`toolcell: sandbox image: | ${line}\n`);
      throw error;
    }
  }
  const docker = createEngineClient(engine);
  const imageEnv = await imageEnvironmentNames(docker, image);
  const runtimes = new RuntimeCatalog(docker);
  // A named runtime the engine lacks is refused now, in one line saying how to add it.
  await runtimes.resolve(resolved.runtime, { egress: false });
  const { defaultName: defaultRuntime } = await runtimes.list();
  if (resolved.removeLeftovers) {
    await removeLeftovers(docker);
  }
  const backendId = randomBytes(6).toString('hex');
  const egress = resolved.egress ? await EgressNetwork.create({ docker, backendId, settings: resolved.egress }) : undefined;
  const backend = new DockerBackend({ docker, engine, options: resolved, image, imageEnv, backendId, runtimes, defaultRuntime, ...(egress ? { egress } : {}) });
  if (resolved.prewarmWorkspace !== undefined) backend.prewarm(resolved.prewarmWorkspace);
  return backend;
}
