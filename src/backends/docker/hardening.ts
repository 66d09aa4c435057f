/*
 * Sandbox hardening: the facts SECURITY.md states (keep them in sync).
 *
 * One container per session. A session's files in /tmp and its processes are
 * never visible to another session; sessions of one workspace share only the
 * workspace mount.
 *
 * Defaults (each configurable through DockerBackendOptions):
 *   NetworkMode none · ReadonlyRootfs · tmpfs /tmp (256 MiB, mode 1777) and
 *   /home/sandbox (64 MiB, owned by the command user), both nosuid,nodev;
 *   exec is allowed there because the writable workspace allows it anyway ·
 *   CapDrop ALL, CapAdd SETUID SETGID SETPCAP KILL (for the supervisor
 *   only, see below) · no-new-privileges · the engine's default seccomp profile, and
 *   on each command a stacked filter refusing io_uring and x32-ABI system
 *   calls (Docker 20.10's profile lets io_uring through), socket address
 *   families other than unix, inet, inet6 and netlink (route and
 *   sock_diag only), i386 socketcall, set-id mode bits (chmod, open,
 *   mknod…), and inotify when commands run as uid 0 (sandbox/supervisor/
 *   syscall_filter.py) · the engine's masked /proc and /sys paths plus
 *   what else shows the host's or other tenants' state (MASKED_PATHS) ·
 *   PidsLimit 256 · Memory 1 GiB = MemorySwap (no swap; tmpfs pages count) ·
 *   NanoCpus 1 CPU (on the CPUs of options.cpuSet, CpusetCpus) · ulimits fsize 1 GiB, nofile 1024, sigpending 4096,
 *   msgqueue 256 KiB (no nproc: RLIMIT_NPROC counts per uid across the
 *   whole host, so it would couple sessions; the pids limit bounds each
 *   container instead; sigpending and msgqueue are checked against the
 *   uid's host-wide total, so they bound what one container can take of
 *   its uid's budget, root's included) · Init (docker-init as pid 1) ·
 *   logging driver none (output is streamed, never written to the engine's
 *   disk) · IpcMode private · optional Runtime (e.g. runsc).
 *
 * Under gVisor (runsc; SECURITY.md "Using gVisor" has every difference and
 *   its test): the pids limit is gVisor's kernel's RLIMIT_NPROC, and the
 *   host's PidsLimit only bounds the Sentry (gvisorHostPids). The supervisor
 *   is not told to compare the mounts' device and inode (gVisor numbers its
 *   files itself): the caller must mount private mount points instead, and
 *   refuses otherwise (docker-backend.ts). A reaper cannot be a child
 *   subreaper there: a call's processes carry its call group instead
 *   (sandbox/supervisor/proctree.py). No sigpending or msgqueue ulimit
 *   there: gVisor's kernel keeps those budgets itself, per session.
 *   Commands never run as uid 0 there: gVisor does not keep a uid-0
 *   process from init's and the supervisor's descriptors and signals as
 *   Linux does ("Uid 0" below), so a workspace root owns is refused
 *   (docker-backend.ts).
 *
 * Mounts: only the workspace, read-write at /workspace (the commands' cwd).
 *   Its state folder .toolcell/ is covered by an empty read-only tmpfs, so
 *   commands cannot read or rewrite toolcell's memory file or saved outputs;
 *   only the container's own log folder, .toolcell/background/<key>/, is
 *   mounted back at .toolcell/background, so sessions never see each
 *   other's background logs. Workspaces that would hand over the host are
 *   refused: /, /proc, /sys, /dev, and any folder holding the engine's
 *   socket. The engine resolves a bind source path again at start, so the
 *   host opens and checks each folder (workspace-dirs.ts, pinned-dir.ts),
 *   and when it runs as root gives the engine private mount points made
 *   from those descriptors (private-mounts.ts); in every case the
 *   supervisor compares each mount's device and inode with the checked
 *   folder's before anything runs, and refuses the container otherwise.
 *
 * Identity. The supervisor (sandbox/supervisor/) is the container's main
 *   process: container root, but with only CAP_SETUID, CAP_SETGID,
 *   CAP_SETPCAP and CAP_KILL, and no-new-privileges. With its per-call
 *   reapers (forked at start-up, reused) it is trusted to (a) start commands
 *   as the command identity and (b) signal any process in the container. It
 *   never runs model-written code itself and reads nothing from commands but
 *   their output bytes, which it frames by length. Commands run as the
 *   command identity (identity.ts: the workspace owner's uid and gid, or a
 *   hosting tenant's own) with empty capability sets, bounding set included
 *   (CapEff/CapPrm/CapBnd 0, NoNewPrivs 1, no supplementary groups), so
 *   they cannot ptrace the supervisor or a reaper (not dumpable, and more
 *   capabilities), cannot signal them (signals need a matching real or
 *   saved uid: theirs is 0 while commands run as another uid, and the
 *   image's `sandbox` uid 10001 while commands run as uid 0), cannot gain
 *   privileges and cannot change identity, at any moment: a reaper takes the
 *   command uid only as its effective uid (to enter the working directory
 *   and create a background log as the user) and starts the command with
 *   posix_spawn of setpriv, which sets groups, gid and uid (real, effective
 *   and saved) and empties the bounding set before it execs bash (setpriv,
 *   between its uid change and that exec, still holds the reaper's
 *   capabilities and is not dumpable, so commands cannot trace it). A
 *   reaper that stops answering a kill is still SIGKILLed by the supervisor
 *   after the grace period + 2 s, and its orphans are killed as strays.
 *   Commands of one session run as the same uid: they can signal, ptrace and
 *   read each other (background jobs included), like processes of one user.
 *   Separate sessions are separate containers and cannot.
 *
 * Uid 0. A workspace root owns (a checkout as root, CI) has commands run as
 *   uid 0, so what they create belongs to root and nothing is rewritten. Such
 *   a process holds no capability (bounding set empty, no-new-privileges):
 *   no DAC override, chown, mknod, mount, ptrace of others, raw I/O or
 *   module loading; the rootfs, /proc/sys and /sys are read-only. What uid
 *   0 still brings: files owned by root open by their owner bits (the
 *   workspace's, which is the point; read-only ones elsewhere, hence the
 *   root-only /proc and /sys files in MASKED_PATHS); signals to processes
 *   whose real uid is 0, which in the container is docker-init alone (it
 *   forwards them to the supervisor, which ignores them); and the host
 *   root's per-user kernel budgets, which it shares without a user
 *   namespace: inotify instances (refused to uid-0 commands by the syscall
 *   filter), pending signals and POSIX message queue bytes (bounded by the
 *   ulimits above), pipe buffers (the soft limit only shrinks new pipes,
 *   and root daemons holding CAP_SYS_RESOURCE are exempt). A set-id bit,
 *   which would make a file the command leaves in the host's workspace run
 *   as root, is refused by the syscall filter.
 *
 * Workspace writes. Nothing in the workspace is chmod-ed, chown-ed or given
 *   ACL entries. Files written by commands belong to the command identity:
 *   the workspace owner, or the tenant.
 *
 * Killing. Docker cannot kill an exec'd process (moby/moby#9098), so commands
 *   never use exec: each runs under a reaper that is a child subreaper
 *   (PR_SET_CHILD_SUBREAPER), so setsid, nohup and double forks stay in its
 *   subtree. A kill freezes the subtree with SIGSTOP (until no new process
 *   appears), sends SIGTERM + SIGCONT, waits the grace period (200 ms) and
 *   SIGKILLs until nothing is left; a call that ends on its own gets the same
 *   treatment for whatever it left behind, unless it is a background call.
 *   Commands get oom_score_adj 1000 (inherited from their reaper), so the OOM
 *   killer picks them before the supervisor. If the supervisor dies anyway,
 *   docker-init exits and the kernel kills every process of the container.
 *
 * Cleanup. Containers carry labels (dev.toolcell.sandbox=1, owner pid, its
 *   start time and host, backend id, workspace); at start-up containers whose
 *   owner process is gone are removed; close() removes all of a backend's.
 *   The supervisor exits when its stdin closes (StdinOnce), i.e. when the
 *   owning process dies, and AutoRemove deletes the stopped container.
 *
 * Workspace disk use. RLIMIT_FSIZE bounds single files only, and the
 *   workspace's disk is the host's. While foreground commands run, the
 *   supervisor samples the workspace filesystem (statvfs) as often as the
 *   headroom left needs (every 5 ms near the limit, up to 50 ms far from it:
 *   the time to use it up at 16 GiB/s or 2 million files/s); when it
 *   lost more than 1 GiB or 100,000 inodes since a command started, the
 *   supervisor confirms the growth is in this workspace (scanning as the
 *   command user: files changed since then, by ctime, whoever owns them,
 *   plus deleted files the session's processes hold open; a folder or
 *   process the user made uninspectable counts as confirmation) and kills the command (whole tree, SIGKILL, with a line
 *   saying why in its output); the command's tree is frozen while this is
 *   checked. Growth by other writers on the filesystem moves the command's
 *   baseline instead, and space others free never becomes an allowance,
 *   except that what others free while the command runs can hide growth the
 *   command made since the last check (so the bound can be exceeded by about
 *   that much). Each command has its own allowance; a background job's
 *   renews every 10 minutes.
 *
 * Not covered: the kernel is shared (use runtime: 'runsc' for gVisor); total
 *   workspace disk use across commands is not limited (put the workspace on
 *   a filesystem with quotas for that); with network 'none' there is no
 *   egress; with `egress` the only way out is toolcell's allowlisting proxy
 *   (egress-network.ts); any other network is the caller's choice.
 */
import type Docker from 'dockerode';
import type { SandboxIdentity } from './identity.js';
import type { ResolvedDockerBackendOptions } from './options.js';
import { SANDBOX_PATHS, SUPERVISOR_PATH } from './sandbox-paths.js';
import { formatIdentity } from './pinned-dir.js';
import type { PreparedWorkspace } from './workspace-dirs.js';

/** Capabilities the supervisor keeps; commands drop them at the identity switch. */
export const SUPERVISOR_CAPABILITIES = ['SETUID', 'SETGID', 'SETPCAP', 'KILL'] as const;

/**
 * Paths the container sees as empty (an engine bind-mounts /dev/null or an
 * empty read-only tmpfs over them; a path this kernel lacks is skipped).
 * Setting the list replaces the engine's default, so it starts with that
 * default (Docker 20.10-24). The rest is what a review of /proc and /sys
 * from inside a container found showing the host's or other tenants'
 * state (SECURITY.md, "What a command can learn", has the review and what
 * stays readable; test/security/host-state.test.ts attacks each).
 */
export const MASKED_PATHS = Object.freeze([
  // The engine's default.
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
  // The host kernel's command line: on a VM it names the hypervisor agent's vsock ports, elsewhere
  // it may carry boot secrets (root= devices, tokens some platforms pass there); bootconfig likewise.
  '/proc/cmdline',
  '/proc/bootconfig',
  // Block devices: every loop device's backing file (a hosting server's tenant disk images, by
  // path), size and I/O counters, and which filesystems are mounted from them, with their use.
  '/sys/block',
  '/sys/class/block',
  '/sys/dev/block',
  '/sys/devices/virtual/block',
  '/sys/class/bdi',
  '/sys/devices/virtual/bdi',
  '/sys/fs/ext4',
  '/sys/fs/btrfs',
  '/sys/fs/xfs',
  '/sys/fs/f2fs',
  '/sys/fs/erofs',
  '/proc/fs',
  '/proc/diskstats',
  '/proc/partitions',
  '/proc/swaps',
  // Every file lock on the host (device and inode: other tenants' activity) and every uid holding keys.
  '/proc/locks',
  '/proc/key-users',
  // The machine's identity: serial numbers, UUIDs, firmware versions; the crash-dump note's physical address.
  '/sys/class/dmi',
  '/sys/devices/virtual/dmi',
  '/sys/kernel/vmcoreinfo',
  // Root-only files that a uid-0 command (a workspace root owns) could read: kernel heap and physical
  // page state (exploit aids), memory monitoring of host processes, and zram's hot_add, whose mere
  // read creates a block device on the host.
  '/proc/slabinfo',
  '/proc/pagetypeinfo',
  '/proc/vmallocinfo',
  '/proc/kpageflags',
  '/proc/kpagecount',
  '/proc/kpagecgroup',
  '/sys/kernel/slab',
  '/sys/kernel/mm/damon',
  '/sys/class/zram-control',
]);

/**
 * The host's pids limit of a gVisor container whose commands may have `pids`
 * tasks. gVisor's Sentry (ptrace platform) uses host tasks for each task of
 * the sandbox (measured: 44 idle, 1504 with 200 sleeping processes, and
 * from 3167 to over 9216 at the peak of a fork storm held to 256 tasks by
 * RLIMIT_NPROC), and a Sentry that cannot make a thread dies with every
 * process of the session: the host limit must never be the one commands
 * reach. They reach RLIMIT_NPROC first (buildContainerSpec), and the
 * supervisor holds its reapers to a quarter of it (supervisor.py); the host
 * limit only bounds the Sentry itself, with room above the storm's peak.
 */
export function gvisorHostPids(pids: number): number {
  return pids * 64 + 1024;
}

/**
 * RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE. The kernel checks each against the
 * total of the uid's pending signals (queued message bytes) host-wide, so a
 * container can take at most this much of its uid's budget: for commands
 * running as uid 0, the budget of the host's root daemons (whose own
 * limits are larger). Ample for any command's own use.
 */
const SIGPENDING = 4096;
const MSGQUEUE_BYTES = 256 * 1024;

/** Size of the read-only tmpfs that hides the state folder. */
const STATE_DIR_COVER_BYTES = 64 * 1024;

export interface ContainerSpecInput {
  image: string;
  /** Names the image's own ENV sets: blanked, so none reaches the supervisor (an image's LD_PRELOAD, PYTHONPATH, PATH). */
  imageEnv?: readonly string[];
  options: ResolvedDockerBackendOptions;
  identity: SandboxIdentity;
  workspace: Pick<PreparedWorkspace, 'workspace' | 'background'>;
  labels: Record<string, string>;
  name?: string;
  /** The egress network to join instead of `hardening.network` (options.egress). */
  egressNetwork?: string;
  /** The parent cgroup (a CPU group, backends/session-limits.ts); default the engine's own. */
  cgroupParent?: string;
  /**
   * The session's OCI runtime (default: options.runtime, else the engine's).
   * `gvisor`: it is gVisor, whose files show its own device and inode
   * numbers, so the supervisor cannot compare the mounts with the folders the
   * host checked; the caller must mount private mount points instead
   * (docker-backend.ts).
   */
  runtime?: { name: string; gvisor: boolean };
}

/** The supervisor's environment: toolcell's few values, and every other name the image's ENV sets, empty. */
function supervisorEnvironment(imageEnv: readonly string[]): string[] {
  const own: Record<string, string> = { LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1', PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
  for (const name of imageEnv) if (!(name in own)) own[name] = '';
  return Object.entries(own).map(([name, value]) => `${name}=${value}`);
}

function tmpfsOptions(sizeBytes: number, extra: string): string {
  return `rw,nosuid,nodev,exec,size=${sizeBytes},${extra}`;
}

/** The container create request for one session: every protection above, applied. */
export function buildContainerSpec(input: ContainerSpecInput): Docker.ContainerCreateOptions {
  const { options, identity, workspace } = input;
  const { limits, hardening } = options;
  const cmd = ['python3', '-B', SUPERVISOR_PATH, '--uid', String(identity.uid), '--gid', String(identity.gid)];
  // With the state folder hidden, the container's own log folder is mounted at backgroundLogs;
  // without, commands see the whole state folder and its log folders, this container's among them.
  const logDir = hardening.hideStateDir ? SANDBOX_PATHS.backgroundLogs : `${SANDBOX_PATHS.backgroundLogs}/${workspace.background.key}`;
  cmd.push('--workspace', SANDBOX_PATHS.workspace, '--log-dir', logDir);
  cmd.push('--workspace-bytes', String(limits.workspaceGrowthBytes), '--workspace-files', String(limits.workspaceGrowthFiles));
  const gvisor = input.runtime?.gvisor === true;
  const verifyMounts = !gvisor;
  if (verifyMounts) cmd.push('--expect-workspace', formatIdentity(workspace.workspace.expected));

  const mounts: Docker.MountSettings[] = [
    { Type: 'bind', Source: workspace.workspace.source, Target: SANDBOX_PATHS.workspace, ReadOnly: false, BindOptions: { Propagation: 'rprivate' } },
  ];
  if (hardening.hideStateDir) {
    if (verifyMounts) cmd.push('--expect-log-dir', formatIdentity(workspace.background.expected));
    mounts.push(
      { Type: 'tmpfs', Source: '', Target: SANDBOX_PATHS.stateDir, ReadOnly: true, TmpfsOptions: { SizeBytes: STATE_DIR_COVER_BYTES, Mode: 0o755 } },
      { Type: 'bind', Source: workspace.background.source, Target: SANDBOX_PATHS.backgroundLogs, ReadOnly: false, BindOptions: { Propagation: 'rprivate' } },
    );
  }

  const securityOpt = [...hardening.securityOpt];
  if (hardening.noNewPrivileges) securityOpt.unshift('no-new-privileges');

  const hostConfig: Docker.HostConfig = {
    NetworkMode: input.egressNetwork ?? hardening.network,
    ReadonlyRootfs: hardening.readOnlyRoot,
    Tmpfs: {
      [SANDBOX_PATHS.tmp]: tmpfsOptions(limits.tmpBytes, 'mode=1777'),
      [SANDBOX_PATHS.home]: tmpfsOptions(limits.homeBytes, `mode=0700,uid=${identity.uid},gid=${identity.gid}`),
    },
    Mounts: mounts,
    CapDrop: ['ALL'],
    CapAdd: [...SUPERVISOR_CAPABILITIES],
    MaskedPaths: [...MASKED_PATHS],
    SecurityOpt: securityOpt,
    PidsLimit: gvisor ? gvisorHostPids(limits.pids) : limits.pids,
    Memory: limits.memory,
    MemorySwap: limits.memory,
    NanoCpus: Math.round(limits.cpus * 1e9),
    ...(options.cpuSet !== undefined ? { CpusetCpus: options.cpuSet } : {}),
    ...(input.cgroupParent !== undefined ? { CgroupParent: input.cgroupParent } : {}),
    Ulimits: [
      { Name: 'fsize', Soft: limits.fileSizeBytes, Hard: limits.fileSizeBytes },
      { Name: 'nofile', Soft: limits.openFiles, Hard: limits.openFiles },
      { Name: 'core', Soft: 0, Hard: 0 },
      // Not under gVisor: there pending signals and message queues are counted by gVisor's own kernel, one per
      // session, never against a host uid's budget; and a fork storm killed under RLIMIT_SIGPENDING there left
      // processes alive after its call ended (test/security/resources.test.ts, in 2 runs of 3).
      ...(gvisor
        ? []
        : [
            { Name: 'sigpending', Soft: SIGPENDING, Hard: SIGPENDING },
            { Name: 'msgqueue', Soft: MSGQUEUE_BYTES, Hard: MSGQUEUE_BYTES },
          ]),
      // Under gVisor the pids limit is its kernel's: RLIMIT_NPROC counts the commands' tasks (threads
      // included) in that kernel alone, so it couples no one; the host's limit only bounds the Sentry.
      ...(gvisor ? [{ Name: 'nproc', Soft: limits.pids, Hard: limits.pids }] : []),
    ],
    Init: true,
    IpcMode: 'private',
    LogConfig: { Type: 'none', Config: {} },
    AutoRemove: true,
    Privileged: false,
  };
  const runtime = input.runtime?.name ?? options.runtime;
  if (runtime !== undefined) hostConfig.Runtime = runtime;
  // On the egress network the only way out is the proxy's IPv4 address: no IPv6 at all, not even link-local to the host.
  if (input.egressNetwork !== undefined) hostConfig.Sysctls = { 'net.ipv6.conf.all.disable_ipv6': '1', 'net.ipv6.conf.default.disable_ipv6': '1' };

  const spec: Docker.ContainerCreateOptions = {
    Image: input.image,
    Cmd: cmd,
    User: '0:0',
    WorkingDir: SANDBOX_PATHS.workspace,
    Env: supervisorEnvironment(input.imageEnv ?? []),
    // Whatever the image says: no entry point of its own in front of the supervisor, no health
    // check run by the engine outside the supervisor (as container root), the command's user set above.
    Entrypoint: [],
    Healthcheck: { Test: ['NONE'] },
    Labels: input.labels,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: true,
    // Closing our end of the attach stream closes the supervisor's stdin,
    // which kills the session: a crashed host leaves nothing running.
    StdinOnce: true,
    Tty: false,
    NetworkDisabled: input.egressNetwork === undefined && hardening.network === 'none',
    HostConfig: hostConfig,
  };
  if (input.name !== undefined) spec.name = input.name;
  return spec;
}
