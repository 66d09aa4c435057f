/**
 * Privilege: commands hold no capabilities and cannot gain any (setuid
 * binaries, sudo, user namespaces), cannot create devices, mount, or
 * ptrace/signal the supervisor, and cannot reach the kernel knobs that
 * classic container escapes use (core_pattern, cgroup release_agent,
 * sysrq).
 *
 * Commands run as the workspace owner: run as root, the suite's workspaces
 * are root's, so commands run as uid 0 (without a capability); run it again
 * with TOOLCELL_TEST_WORKSPACE_OWNER=4242:4242 for a non-root owner. Every
 * attack holds both ways; where uid 0 makes a step succeed harmlessly (kill
 * of pid 1, which the kernel ignores and the supervisor does not hear), the
 * assertion says so.
 */
import anyTest from 'ava';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, commandProcesses } from '../helpers/security.js';
import { UNDER_GVISOR } from '../helpers/test-runtime.js';

const docker = await requireDocker(anyTest, 'security/privileges');
const test = docker.serial;

let session: SandboxSession;
let containerId: string;
/** The uid commands run as (the workspace owner's). */
let uid: number;

docker.before(async () => {
  session = await SandboxSession.open({ timeoutSeconds: 20 });
  [containerId = ''] = await session.containerIds();
  uid = Number((await session.shell('id -u')).output.trim());
});
docker.after.always(async () => {
  await session?.close();
});

async function assertContained(t: import('ava').ExecutionContext, label: string): Promise<void> {
  t.deepEqual(await commandProcesses(containerId), [], `${label}: no process of the call may survive`);
  t.deepEqual(await session.containerIds(), [containerId], `${label}: the session keeps its container`);
  await session.assertAlive(t, `${label}: next call`);
}

test('NoNewPrivs is 1 and every capability set is empty; seccomp filters syscalls', async (t) => {
  // gVisor's status has no NoNewPrivs line: prctl(PR_GET_NO_NEW_PRIVS) asks its kernel.
  const outcome = await session.shell(
    "grep -E '^(NoNewPrivs|Cap(Inh|Prm|Eff|Amb)|Seccomp):' /proc/self/status; python3 -c 'import ctypes; print(\"prctl-nnp\", ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))'",
  );
  t.regex(outcome.output, UNDER_GVISOR ? /prctl-nnp 1/ : /NoNewPrivs:\s+1/);
  // gVisor's status has no CapAmb line: with no-new-privileges and empty permitted and inheritable sets, nothing can be ambient.
  for (const set of UNDER_GVISOR ? ['CapInh', 'CapPrm', 'CapEff'] : ['CapInh', 'CapPrm', 'CapEff', 'CapAmb'])
    t.regex(outcome.output, new RegExp(`${set}:\\s+0{16}`), set);
  t.regex(outcome.output, /Seccomp:\s+2/);
  // gVisor's kernel does not load the engine's profile and shows no filter count: toolcell's filter is what applies there.
  if (!UNDER_GVISOR) {
    const filters = Number(/Seccomp_filters:\s+(\d+)/.exec((await session.shell('grep Seccomp_filters /proc/self/status')).output)?.[1]);
    t.true(filters >= 2, `the engine's profile plus toolcell's own filter are stacked (${filters})`);
  }
  await assertContained(t, 'status');
});

test('setuid-root binaries do not elevate (su, mount, passwd, a setuid copy), setuid() to another uid fails, and no set-id bit can be set', async (t) => {
  const other = uid === 4321 ? 4322 : 4321;
  const outcome = await session.shell(
    [
      'find / -xdev -perm -4000 -type f 2>/dev/null | tee /tmp/suid | sed "s/^/suid: /"',
      'for b in $(cat /tmp/suid); do "$b" --help </dev/null >/dev/null 2>&1; done',
      "su -c 'id -u; grep CapEff /proc/self/status' root </dev/null 2>&1 | tail -2 | sed 's/^/su: /'",
      `python3 -c 'import os
for target in (0, ${other}):
    try:
        os.setuid(target)
        print("SETUID-OK" if os.getuid() != ${uid} else "setuid-same", target)
    except OSError as e:
        print("setuid", e.strerror)'`,
      'cp /bin/bash /tmp/rootbash; chmod u+s /tmp/rootbash; echo "chmod=$?"; cp /bin/bash ./setid-copy; chmod 2755 ./setid-copy; echo "setgid=$?"',
      'python3 -c \'import os; os.open("/tmp/made-suid", os.O_CREAT | os.O_WRONLY, 0o4755)\'; echo "open=$?"',
      "/tmp/rootbash -p -c 'echo euid=$(id -u)'",
      "grep CapEff /proc/self/status | sed 's/^/final-/'",
      'stat -c "%a %n" /tmp/rootbash ./setid-copy /tmp/made-suid 2>&1; rm -f ./setid-copy',
    ].join('; '),
  );
  t.false(outcome.output.includes('SETUID-OK'), outcome.output);
  t.regex(outcome.output, /setuid Operation not permitted/, `setuid(${other}) must fail`);
  t.regex(outcome.output, /chmod=1/, 'chmod u+s is refused');
  t.regex(outcome.output, /setgid=1/, 'chmod g+s in the workspace is refused');
  t.regex(outcome.output, /open=1/, 'creating a file with a set-id mode is refused');
  t.notRegex(outcome.output, /^[0-7]*[2-7][0-7]{3} /m, 'no file carries a set-id bit');
  t.regex(outcome.output, /final-CapEff:\s+0{16}/);
  t.notRegex(outcome.output, /su: CapEff:\s+0*[1-9a-f]/, 'su gains no capability');
  if (uid !== 0) {
    t.notRegex(outcome.output, /uid=0\(root\)/);
    t.notRegex(outcome.output, /euid=0\b/);
    t.notRegex(outcome.output, /^su: 0$/m);
  }
  await assertContained(t, 'setuid');
});

test('sudo is absent or refuses without a password prompt', async (t) => {
  const outcome = await session.shell('sudo -n id 2>&1; echo "sudo=$?"; sudo id 2>&1 </dev/null; echo "sudo2=$?"');
  t.notRegex(outcome.output, /uid=0\(root\)/);
  t.notRegex(outcome.output, /sudo=0\b/);
  t.notRegex(outcome.output, /sudo2=0\b/);
  await assertContained(t, 'sudo');
});

test('mknod of block and character devices fails in the workspace and in /tmp', async (t) => {
  const outcome = await session.shell(
    'mknod /tmp/sda b 8 0; echo "blk=$?"; mknod ./mem c 1 1; echo "chr=$?"; mkfifo ./fifo-ok; echo "fifo=$?"; ls -la ./mem /tmp/sda 2>&1; rm -f ./fifo-ok; ' +
      'head -c 1 /tmp/sda >/dev/null 2>&1; echo "open-blk=$?"',
  );
  // gVisor lets a node be made on its own tmpfs, but it leads to no device: gVisor has none of the host's.
  if (UNDER_GVISOR) t.regex(outcome.output, /open-blk=1/, 'a block node made under gVisor opens no device');
  else t.regex(outcome.output, /blk=1/);
  t.regex(outcome.output, /chr=1/);
  t.regex(outcome.output, /Operation not permitted/);
  await assertContained(t, 'mknod');
});

test('ptrace of the supervisor, pid 1 and the call reaper is refused', async (t) => {
  const outcome = await session.shell(`python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
targets = {"init": 1, "reaper": os.getppid()}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            if os.stat("/proc/" + pid).st_uid == 0: targets["root-" + pid] = int(pid)
        except OSError: pass
for name, pid in targets.items():
    r = libc.ptrace(PTRACE_ATTACH, pid, 0, 0)
    print(name, "ATTACHED" if r == 0 else "refused", os.strerror(ctypes.get_errno()))'`);
  t.false(outcome.output.includes('ATTACHED'), outcome.output);
  t.regex(outcome.output, /init refused/);
  await assertContained(t, 'ptrace');
});

test("signals to the supervisor, the reaper and init are refused or unheard; kill -9 -1 reaches only the caller's own processes", async (t) => {
  // The reaper's start-up window is attacked in reaper.test.ts; here the command signals once it runs.
  // As uid 0 a command may signal init (docker-init, also uid 0): the kernel drops SIGKILL and SIGSTOP to a
  // namespace's init, and the signals init forwards to the supervisor are ignored there. Any signal heard
  // would stop or end the supervisor, and assertContained would fail.
  const supervisor = "$(awk '/^PPid:/ {print $2}' /proc/$PPID/status)";
  const outcome = await session.shell(
    [
      'sleep 0.2; kill -STOP $PPID; echo "ppid=$?"',
      `kill -STOP ${supervisor}; echo "supervisor=$?"`,
      'kill -9 1; echo "init=$?"',
      'for s in TSTP TTIN TTOU TERM INT HUP QUIT USR1 USR2 ALRM PIPE WINCH IO PWR RTMIN; do kill -s $s 1 2>/dev/null; done; echo relayed',
      'sleep 300 & kill -9 -1; echo "all=$?"',
    ].join('; '),
  );
  t.regex(outcome.output, /ppid=1/);
  t.regex(outcome.output, /supervisor=1/);
  t.regex(outcome.output, /Operation not permitted/);
  if (uid !== 0) t.regex(outcome.output, /init=1/);
  await assertContained(t, 'kill -1');
});

test("the supervisor's and reapers' file descriptors (its protocol stream) cannot be read, opened or written", async (t) => {
  // toolcell's processes (init, supervisor, reapers) are the ones holding capabilities: commands never do.
  // A uid-0 command may list their fd numbers (the kernel shows a non-dumpable process's /proc entries as
  // root's), never where they lead nor open them.
  const outcome = await session.shell(
    `for p in /proc/[0-9]*; do grep -q '^CapPrm:[[:space:]]*0*[1-9a-f]' "$p/status" 2>/dev/null || continue; echo "target $p"; ls "$p/fd" >/dev/null 2>&1 && echo "listed $p"; for f in "$p"/fd/* "$p"/fd/0 "$p"/fd/1; do readlink "$f" >/dev/null 2>&1 && echo "resolved $f"; printf 'forged' > "$f" 2>/dev/null && echo "wrote $f"; done; done; cat /proc/1/fd/0 </dev/null 2>&1 | head -c 100; echo; echo forge-done`,
  );
  t.true(outcome.output.includes('forge-done'), outcome.output.slice(0, 500));
  t.true((outcome.output.match(/^target /gm) ?? []).length >= 3, `init, the supervisor and a reaper are attacked: ${outcome.output}`);
  if (UNDER_GVISOR) {
    // gVisor lists a toolcell process's fd table to anyone and resolves its links (names only, e.g. socket:[3]);
    // what can be opened for writing is /dev/null only.
    const written = [...outcome.output.matchAll(/^wrote (\S+)$/gm)].map((match) => match[1]!);
    const targets = await session.shell(`for f in ${written.join(' ') || '/dev/null'}; do readlink "$f"; done`);
    t.true(
      targets.output
        .split('\n')
        .filter(Boolean)
        .every((target) => target === '/dev/null'),
      `only /dev/null was written: ${targets.output}`,
    );
    t.notRegex(outcome.output, /^wrote \/proc\/(1|2)\/fd\/[01]$/m, "init's and the supervisor's stdio (the protocol stream) were not written");
  } else {
    if (uid !== 0) t.notRegex(outcome.output, /^listed /m, "a root process's fd table was listed");
    t.notRegex(outcome.output, /^resolved /m, "a toolcell process's fd was resolved");
    t.notRegex(outcome.output, /^wrote /m, "a toolcell process's fd was written");
  }
  await assertContained(t, 'protocol forgery');
});

test('mount and unshare (user, mount, network, pid namespaces) are refused', async (t) => {
  const outcome = await session.shell(
    [
      'mount -t tmpfs none /mnt 2>&1; echo "mount=$?"',
      'mount -t cgroup -o rdma cgroup /tmp 2>&1; echo "cgroup=$?"',
      'unshare -Ur id 2>&1; echo "userns=$?"',
      'unshare -m true 2>&1; echo "mntns=$?"',
      'unshare -n true 2>&1; echo "netns=$?"',
      'unshare -pf true 2>&1; echo "pidns=$?"',
    ].join('; '),
  );
  for (const key of ['mount', 'cgroup', 'userns', 'mntns', 'netns', 'pidns']) t.notRegex(outcome.output, new RegExp(`${key}=0\\b`), key);
  t.notRegex(outcome.output, /uid=0\(root\)/, 'no root inside a new user namespace');
  await assertContained(t, 'mount/unshare');
});

test('kernel knobs used by container escapes are read-only: core_pattern, release_agent, sysrq, sysfs', async (t) => {
  const outcome = await session.shell(
    [
      'echo \'|/tmp/x\' > /proc/sys/kernel/core_pattern; echo "core=$?"',
      'echo 1 > /proc/sysrq-trigger; echo "sysrq=$?"',
      'for f in /sys/fs/cgroup/release_agent /sys/fs/cgroup/*/release_agent; do echo /tmp/x > "$f"; done 2>/dev/null; echo "release=$?"',
      'echo 1 > /sys/kernel/mm/transparent_hugepage/enabled; echo "sysfs=$?"',
      'cat /proc/sys/kernel/core_pattern',
    ].join('; '),
  );
  for (const key of ['core', 'sysrq', 'release', 'sysfs']) t.notRegex(outcome.output, new RegExp(`${key}=0\\b`), key);
  t.false(outcome.output.includes('|/tmp/x'), 'core_pattern unchanged');
  await assertContained(t, 'kernel knobs');
});

test('system calls that kernel exploits and known escapes rely on are filtered (Shocker, keyrings, eBPF, perf, userfaultfd, io_uring, modules, the x32 table)', async (t) => {
  // x86_64 numbers; each call gets harmless arguments, so anything but EPERM means the filter let it reach the kernel.
  const outcome = await session.shell(`python3 - <<'PY'
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
calls = {"open_by_handle_at": 304, "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
         "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
         "kexec_load": 246, "init_module": 175, "finit_module": 313, "x32_getpid": 0x40000000 | 39}
print("arch", platform.machine())
for name, nr in calls.items():
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    print(name, "filtered" if r < 0 and ctypes.get_errno() == 1 else "REACHED " + os.strerror(ctypes.get_errno()))
PY`);
  t.regex(outcome.output, /arch x86_64/, 'the syscall numbers here are for x86_64');
  const reached = [...outcome.output.matchAll(/^(\w+) REACHED/gm)].map((m) => m[1]);
  if (UNDER_GVISOR) {
    // Under gVisor nothing reaches the host kernel: what toolcell's filter lets through, gVisor's kernel answers (gvisor-kernel.test.ts).
    t.deepEqual(
      reached.filter(
        (name) =>
          ![
            'open_by_handle_at',
            'keyctl',
            'add_key',
            'request_key',
            'perf_event_open',
            'userfaultfd',
            'bpf',
            'kexec_load',
            'init_module',
            'finit_module',
          ].includes(name!),
      ),
      [],
    );
    t.notRegex(outcome.output, /REACHED Success/, 'none of them succeeds in gVisor either');
  } else t.deepEqual(reached, [], `these system calls reach the host kernel: ${reached.join(', ')}`);
  await assertContained(t, 'syscall filter');
});

/** A command that prints the fds it inherited as `fd:target`, leaving out those it opened to list them. */
const LIST_FDS = `python3 -c 'import os, re
names = os.listdir("/proc/self/fd")
links = [(n, os.readlink("/proc/self/fd/" + n)) for n in names if os.path.exists("/proc/self/fd/" + n)]
print(" ".join(n for n, target in sorted(links, key=lambda l: int(l[0])) if not re.fullmatch(r"/proc/[0-9]+/fd", target)))'`;

test('commands inherit no file descriptor beyond stdio (no leaked supervisor socket or host fd, the runc CVE-2024-21626 class)', async (t) => {
  const foreground = await session.shell(LIST_FDS);
  t.is(foreground.output.trim(), '0 1 2', 'foreground fds');
  const background = await session.shell(`${LIST_FDS} > bg-fds.tmp; mv bg-fds.tmp bg-fds.txt`, { background: true });
  t.is(background.status, 'success', background.text);
  let text = '';
  for (let i = 0; i < 50 && text === ''; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    text = (await session.shell('cat bg-fds.txt 2>/dev/null')).output.trim();
  }
  t.is(text, '0 1 2', 'background fds');
  await session.shell('rm -f bg-fds.txt');
  await assertContained(t, 'fd leak');
});
