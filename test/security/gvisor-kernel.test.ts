/**
 * What gVisor adds: the host kernel is out of the sandbox's reach. Under
 * runsc, dmesg, /proc/version and uname are gVisor's, and the kernel
 * interfaces that runc's sandbox reaches through the engine's seccomp profile
 * (which answers EPERM for what it refuses) are answered by gVisor's own
 * kernel instead: absent, refused in its own words, or implemented there.
 * Each probe runs side by side in a runc session and a runsc session.
 */
import anyTest from 'ava';
import { readFile } from 'node:fs/promises';
import { release } from 'node:os';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession } from '../helpers/security.js';
import { requireGvisor } from '../helpers/test-runtime.js';

const docker = await requireDocker(anyTest, 'security/gvisor-kernel');
const test = (await requireGvisor(docker, 'security/gvisor-kernel')).serial;

let gvisor: SandboxSession;
let runc: SandboxSession;

docker.before(async () => {
  [gvisor, runc] = await Promise.all([SandboxSession.open({ runtime: 'runsc' }), SandboxSession.open({ runtime: 'runc' })]);
});
docker.after.always(async () => {
  await Promise.all([gvisor?.close(), runc?.close()]);
});

/** Each interface's answer: "ok", or the errno name. x86_64 numbers; the arguments are the least each call needs. */
const PROBE = `python3 - <<'PY'
import ctypes, errno, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(256)
def call(nr, *args):
    result = libc.syscall(nr, *args)
    return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
print(json.dumps({
    "keyctl": call(250, 0, ctypes.c_long(-3), 0),
    "add_key": call(248, b"user", b"toolcell-probe", b"secret", 6, ctypes.c_long(-2)),
    "io_uring_setup": call(425, 1, buf),
    "perf_event_open": call(298, buf, 0, ctypes.c_long(-1), ctypes.c_long(-1), 0),
    "userfaultfd": call(323, 0),
    "bpf": call(321, 0, buf, 72),
    "open_by_handle_at": call(304, ctypes.c_long(-100), buf, 0),
}))
PY`;

async function probe(session: SandboxSession): Promise<Record<string, string>> {
  const outcome = await session.shell(PROBE);
  return JSON.parse(/\{.*\}/.exec(outcome.output)?.[0] ?? '{}') as Record<string, string>;
}

test("dmesg, /proc/version and uname are gVisor's, never the host kernel's", async (t) => {
  const hostVersion = (await readFile('/proc/version', 'utf8')).trim();
  const outcome = await gvisor.shell('dmesg | head -3; echo "version=$(cat /proc/version)"; echo "release=$(uname -r)"; echo "sysname=$(uname -sv)"');
  t.regex(outcome.output, /Starting gVisor/, 'gVisor boot messages, not the host log');
  t.false(outcome.output.includes(hostVersion), 'not the host /proc/version');
  t.notRegex(outcome.output, new RegExp(`release=${release().replace(/[.+]/g, '\\$&')}\\b`), "not the host's release");
  const listing = await gvisor.shell('ls -ld /workspace /tmp && stat -c "%a %U" /tmp');
  t.regex(listing.output, /^d\S+ .* \/workspace$/m, 'ls -l works under gVisor (sandbox/compat/statx-compat.c)');
  t.regex(listing.output, /^1777 root$/m, 'and stat');
  const plain = await runc.shell('echo "release=$(uname -r)"; dmesg 2>&1 | head -1');
  t.regex(plain.output, new RegExp(`release=${release().replace(/[.+]/g, '\\$&')}`), "runc's sandbox shares the host kernel: its release is the host's");
  t.notRegex(plain.output, /Starting gVisor/);
});

test('the keyring, io_uring, perf, userfaultfd, eBPF and file handles answer from gVisor, not from the host kernel', async (t) => {
  const [inGvisor, inRunc] = await Promise.all([probe(gvisor), probe(runc)]);
  t.log('runc:', JSON.stringify(inRunc));
  t.log('runsc:', JSON.stringify(inGvisor));
  for (const name of Object.keys(inRunc)) {
    // Under runc each is refused by the engine's seccomp profile or toolcell's stacked filter (EPERM) before the host kernel runs it.
    t.is(inRunc[name], 'EPERM', `runc: ${name} is refused by a seccomp filter`);
    t.not(inGvisor[name], 'ok', `runsc: ${name} does not succeed`);
  }
  // gVisor's own answers: its keyring refuses (EACCES), it has no perf events (ENODEV), no userfaultfd (ENOSYS) and no file handles (ENOTSUP).
  t.is(inGvisor['keyctl'], 'EACCES');
  t.is(inGvisor['perf_event_open'], 'ENODEV');
  t.is(inGvisor['userfaultfd'], 'ENOSYS');
  t.is(inGvisor['open_by_handle_at'], 'ENOTSUP');
  // io_uring is refused by toolcell's filter (EPERM) in both: gVisor implements it in its own kernel, but commands never need it.
  t.is(inGvisor['io_uring_setup'], 'EPERM');
});

test("under gVisor the pids limit is its own kernel's (RLIMIT_NPROC), and commands carry one marker group their call is found by", async (t) => {
  const outcome = await gvisor.shell('ulimit -u; id -G');
  const [nproc, groups] = outcome.output.trim().split('\n');
  t.is(nproc, '256', 'the container pids limit, enforced by gVisor');
  const ids = (groups ?? '').trim().split(/\s+/).map(Number);
  t.is(ids.length, 2, 'the primary group and the call group');
  t.true(ids[1]! >= 2_000_000_000, `the call group (${ids[1]}) is above every real gid`);
  const plain = await runc.shell('id -G');
  t.is(plain.output.trim().split(/\s+/).length, 1, 'runc: no supplementary group (the reapers are subreapers there)');
});
