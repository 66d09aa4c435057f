/**
 * The hardening as a command sees it from inside its container.
 */
import anyTest from 'ava';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeWorkspace, requireDocker, runCommand, useSandboxBackend } from '../../helpers/docker.js';
import { UNDER_GVISOR } from '../../helpers/test-runtime.js';

const test = await requireDocker(anyTest, 'sandbox/hardening-inside');
const sandbox = useSandboxBackend(test);

function field(status: string, name: string): string | undefined {
  return new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1]?.trim();
}

test('commands have no capabilities and no way to gain privileges, and run as the workspace owner', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const session = await sandbox.session(t, { workspaceRoot });
  // gVisor's /proc/self/status has no NoNewPrivs line: prctl asks its kernel.
  const { stdout } = await runCommand(
    session,
    'cat /proc/self/status; python3 -c \'import ctypes; print("NoNewPrivs:", ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))\'',
    { mode: 'pipes' },
  );
  t.is(field(stdout, 'NoNewPrivs'), '1');
  t.is(field(stdout, 'CapEff'), '0000000000000000');
  t.is(field(stdout, 'CapPrm'), '0000000000000000');
  // gVisor's status has no CapAmb line (an ambient capability needs a permitted and inheritable one, and those are empty).
  if (!UNDER_GVISOR) t.is(field(stdout, 'CapAmb'), '0000000000000000');
  t.is(field(stdout, 'CapBnd'), '0000000000000000', 'nothing to regain, not even for a uid-0 command');
  // Under gVisor the engine's profile is not loaded in its kernel; toolcell's own filter is (syscall_filter.py).
  t.is(field(stdout, 'Seccomp'), '2', UNDER_GVISOR ? "toolcell's seccomp filter applies" : "the engine's default seccomp filter applies");
  const uids = field(stdout, 'Uid')?.split(/\s+/) ?? [];
  t.is(uids.length, 4);
  const owner = String((await stat(workspaceRoot)).uid);
  t.true(
    uids.every((uid) => uid === owner),
    `real, effective, saved and fs uid are the workspace owner's (${owner}): ${uids.join(' ')}`,
  );
  if (UNDER_GVISOR) t.true(Number(field(stdout, 'Groups')) >= 2_000_000_000, 'one supplementary group: the call group (proctree.py), no real group');
  else t.is(field(stdout, 'Groups'), '', 'no supplementary groups');
});

test('the root filesystem is read-only; /tmp and home are writable tmpfs', async (t) => {
  const session = await sandbox.session(t);
  const root = await runCommand(session, 'touch /usr/toolcell-probe; grep " / " /proc/mounts', { mode: 'pipes' });
  t.regex(root.stderr, /cannot touch/);
  // gVisor checks the permission before the read-only mount: the sandbox user gets EACCES there, root EROFS.
  t.regex(root.stderr, UNDER_GVISOR ? /Permission denied|Read-only file system/ : /Read-only file system/);
  t.regex(root.stdout, / \/ \S+ ro[, ]/, 'the root is mounted read-only');
  const scratch = await runCommand(session, 'echo a > /tmp/x && echo b > "$HOME/y" && cat /tmp/x "$HOME/y" && grep -E " /(tmp|home/sandbox) " /proc/mounts', {
    mode: 'pipes',
  });
  t.is(scratch.status.exitCode, 0, scratch.stderr);
  t.regex(scratch.stdout, /^a\nb\n/);
  // gVisor shows no nosuid/nodev (its kernel has no host devices, and no-new-privileges makes setuid inert).
  t.regex(scratch.stdout, UNDER_GVISOR ? / \/tmp tmpfs rw,size=/ : /tmpfs \/tmp tmpfs rw,nosuid,nodev/);
  t.regex(scratch.stdout, UNDER_GVISOR ? / \/home\/sandbox tmpfs rw,size=/ : /tmpfs \/home\/sandbox tmpfs rw,nosuid,nodev/);
});

test('there is no network but loopback', async (t) => {
  const session = await sandbox.session(t);
  const { stdout } = await runCommand(session, 'ls /sys/class/net', { mode: 'pipes' });
  t.deepEqual(stdout.trim().split(/\s+/), ['lo']);
});

test('only the workspace is mounted from the host, at /workspace, as the working directory', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, "pwd; awk '$2 ~ /^\\/workspace/ {print $2, $4}' /proc/mounts", { mode: 'pipes' });
  const lines = result.stdout.trim().split('\n');
  t.is(lines[0], '/workspace');
  const mounts = lines.slice(1).map((line) => line.split(' ')[0]);
  t.deepEqual(mounts, ['/workspace', '/workspace/.toolcell', '/workspace/.toolcell/background']);
  t.regex(lines[1] ?? '', /^\/workspace rw,/);
  t.regex(lines[2] ?? '', /^\/workspace\/\.toolcell ro,/);
});

test("the workspace's state folder is hidden from commands and stays untouched", async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  await mkdir(join(workspaceRoot, '.toolcell'));
  await writeFile(join(workspaceRoot, '.toolcell', 'memory.md'), 'remember this\n');
  const session = await sandbox.session(t, { workspaceRoot });
  const result = await runCommand(session, 'ls -A /workspace/.toolcell; cat /workspace/.toolcell/memory.md; echo injected > /workspace/.toolcell/memory.md', {
    mode: 'pipes',
  });
  t.is(result.stdout.trim(), 'background');
  t.regex(result.stderr, /No such file or directory/);
  t.regex(result.stderr, UNDER_GVISOR ? /Read-only file system|Permission denied/ : /Read-only file system/);
  t.is(await readFile(join(workspaceRoot, '.toolcell', 'memory.md'), 'utf8'), 'remember this\n');
});

test('limits: file size, open files, pids, memory without swap', async (t) => {
  const session = await sandbox.session(t);
  const { stdout } = await runCommand(
    session,
    // Under gVisor its kernel holds the pids limit (RLIMIT_NPROC) and shows the memory limit as its total memory.
    UNDER_GVISOR
      ? "ulimit -f; ulimit -n; ulimit -u; awk '/MemTotal/ {print $2 * 1024}' /proc/meminfo"
      : 'ulimit -f; ulimit -n; cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; ' +
          'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max',
    { mode: 'pipes' },
  );
  const [fsizeBlocks, nofile, pids, memory] = stdout.trim().split('\n');
  t.is(Number(fsizeBlocks) * 1024, 1024 * 1024 * 1024, 'ulimit -f is in 1024-byte blocks');
  t.is(nofile, '1024');
  t.is(pids, '256');
  t.is(memory, String(1024 * 1024 * 1024));
});

test('setuid programs are inert: no setuid bits in the image, and su cannot switch user', async (t) => {
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'find / -xdev -perm /6000 -type f 2>/dev/null | head -5; su -c id root </dev/null; echo "su=$?"', { mode: 'pipes' });
  t.regex(result.stdout, /^su=[1-9]/m);
  t.notRegex(result.stdout, /^\/.*\n.*su=/, 'no setuid/setgid file exists');
});

test('a file written on the host is visible inside and vice versa', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  await writeFile(join(workspaceRoot, 'from-host.txt'), 'host\n');
  const session = await sandbox.session(t, { workspaceRoot });
  const result = await runCommand(session, 'cat from-host.txt && echo inside > from-inside.txt', { mode: 'pipes' });
  t.is(result.stdout, 'host\n');
  t.is(await readFile(join(workspaceRoot, 'from-inside.txt'), 'utf8'), 'inside\n');
});

test('io_uring and x32 system calls are filtered on top of the engine profile', async (t) => {
  const session = await sandbox.session(t);
  const probe = `python3 - <<'PY'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, nr in {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "x32_getpid": 0x40000000 + 39, "getpid": 39}.items():
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    print(name, "EPERM" if r < 0 and ctypes.get_errno() == 1 else "ok")
PY
grep Seccomp_filters /proc/self/status`;
  const { stdout } = await runCommand(session, probe, { mode: 'pipes' });
  t.regex(stdout, /^io_uring_setup EPERM$/m);
  t.regex(stdout, /^io_uring_enter EPERM$/m);
  t.regex(stdout, /^io_uring_register EPERM$/m);
  t.regex(stdout, /^x32_getpid EPERM$/m);
  t.regex(stdout, /^getpid ok$/m, 'ordinary system calls still work');
  // gVisor's status shows no filter count; the answers above are the filter's.
  if (!UNDER_GVISOR) t.regex(stdout, /Seccomp_filters:\s+2/, "the engine's filter and ours");
});

test('fallocate cannot reserve space (EOPNOTSUPP, as on a filesystem without it); freeing modes and posix_fallocate still work', async (t) => {
  const session = await sandbox.session(t);
  // posix_fallocate is glibc's: on EOPNOTSUPP it writes the blocks itself, so callers still get their space.
  const probe = `python3 - <<'PY'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
fd = os.open("reserved", os.O_RDWR | os.O_CREAT, 0o600)
for name, mode in {"default": 0, "keep_size": 1, "zero_range": 0x10, "zero_range_keep_size": 0x11, "insert_range": 0x20, "unshare_range": 0x41}.items():
    r = libc.fallocate(fd, mode, 0, 1 << 20)
    code = ctypes.get_errno()
    print(name, "ok" if r == 0 else "EOPNOTSUPP" if code == errno.EOPNOTSUPP else errno.errorcode.get(code, "?"))
print("blocks", os.fstat(fd).st_blocks)
os.posix_fallocate(fd, 0, 1 << 20)
print("posix_fallocate", os.fstat(fd).st_size, os.fstat(fd).st_blocks * 512 >= 1 << 20)
r = libc.fallocate(fd, 0x03, 0, 1 << 19)
print("punch_hole", "ok" if r == 0 else "EOPNOTSUPP" if ctypes.get_errno() == errno.EOPNOTSUPP else "?", os.fstat(fd).st_blocks * 512 < 1 << 20)
PY
rm -f reserved`;
  const { stdout, stderr } = await runCommand(session, probe, { mode: 'pipes' });
  for (const mode of ['default', 'keep_size', 'zero_range', 'zero_range_keep_size', 'insert_range', 'unshare_range']) {
    t.regex(stdout, new RegExp(`^${mode} EOPNOTSUPP$`, 'm'), `${mode}: ${stdout}${stderr}`);
  }
  t.regex(stdout, /^blocks 0$/m, 'nothing was reserved');
  t.regex(stdout, /^posix_fallocate 1048576 True$/m, 'posix_fallocate still gives the space, by writing it');
  // gVisor's own file system has only the default mode (it answers EOPNOTSUPP to the rest, filter or not).
  const punched = UNDER_GVISOR ? /^punch_hole EOPNOTSUPP False$/m : /^punch_hole ok True$/m;
  t.regex(stdout, punched, `punching a hole (freeing space) is the runtime's answer, not the filter's: ${stdout}`);
});
