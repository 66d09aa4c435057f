/**
 * The host stays out of reach: its files, its processes, its environment,
 * everything outside the workspace, and the Docker socket. Also checks, from
 * the host side, that the session's container carries the hardening that
 * SECURITY.md lists.
 */
import anyTest from 'ava';
import { spawn } from 'node:child_process';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, commandProcesses, dockerInspect, makeTempDir, nonce } from '../helpers/security.js';
import { UNDER_GVISOR } from '../helpers/test-runtime.js';
import { gvisorHostPids } from '../../src/backends/docker/hardening.js';

const docker = await requireDocker(anyTest, 'security/host-isolation');
const test = docker.serial;

/** A secret in the toolcell process's own environment, set before the sandbox starts. */
const CANARY_NAME = 'TOOLCELL_SECURITY_CANARY';
const CANARY = nonce('env-canary');
process.env[CANARY_NAME] = CANARY;
process.env['AWS_SECRET_ACCESS_KEY'] = CANARY;
process.env['GITHUB_TOKEN'] = CANARY;

let session: SandboxSession;
let containerId: string;
/** The uid commands run as: the workspace owner's (0 when the suite runs as root; see privileges.test.ts). */
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
  await session.assertAlive(t, `${label}: next call`);
}

test("the host's files are not visible: /etc/shadow is the image's, a host file by absolute path does not exist", async (t) => {
  const hostDir = await makeTempDir(t, 'toolcell-sec-host-');
  const secret = nonce('host-file');
  await writeFile(join(hostDir, 'secret.txt'), secret);
  const hostShadow = await readFile('/etc/shadow', 'utf8').catch(() => '');
  const outcome = await session.shell(
    `cat /etc/shadow; cat ${hostDir}/secret.txt; cat ../../../../../..${hostDir}/secret.txt; ls -la /root; cat /etc/hostname`,
  );
  t.false(outcome.output.includes(secret), 'a host file is not readable');
  for (const line of hostShadow.split('\n')) {
    const hash = line.split(':')[1] ?? '';
    if (hash.length > 10) t.false(outcome.output.includes(hash), "the host's password hashes are not visible");
  }
  // The image's own shadow file holds no password; a non-root command cannot even read it (uid 0 owns it).
  if (uid !== 0) t.regex(outcome.output, /shadow: Permission denied/, 'even the image shadow file is unreadable for a non-root user');
  await assertContained(t, 'host files');
});

test("the host's processes are not visible (own pid namespace), and pid 1 is the container's init", async (t) => {
  const marker = `${4000 + Math.floor(Math.random() * 999)}.${Math.floor(Math.random() * 1e6)}`;
  const hostSleep = spawn('sleep', [marker], { stdio: 'ignore' });
  t.teardown(() => hostSleep.kill('SIGKILL'));
  const outcome = await session.shell(
    `ps -eo pid,user,args; cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' '; echo; cat /proc/1/comm; ls /proc | grep -c '^[0-9]'`,
  );
  t.false(outcome.output.includes(marker), "a host process's command line is not visible");
  t.false(outcome.output.includes(String(process.pid) + ' ') && outcome.output.includes('ava'), 'the test runner is not visible');
  t.notRegex(outcome.output, /dockerd|containerd|systemd/, "the host's daemons are not visible");
  await assertContained(t, 'host proc');
});

test("the host kernel's command line is masked: /proc/cmdline is empty, like the engine's other masked /proc files", async (t) => {
  const hostCmdline = (await readFile('/proc/cmdline', 'utf8')).trim();
  t.true(hostCmdline.length > 0, 'the host has a kernel command line to hide');
  const outcome = await session.shell('wc -c < /proc/cmdline; cat /proc/cmdline; wc -c < /proc/keys; wc -c < /proc/timer_list');
  t.false(outcome.output.includes(hostCmdline), "the host kernel's command line is not visible");
  // gVisor's /proc is its own: its command line is gVisor's made-up one, and it has no keys or timer_list at all.
  if (UNDER_GVISOR) t.regex(outcome.output, /gvisor/, "gVisor's own command line");
  else t.deepEqual(outcome.output.trim().split(/\s+/), ['0', '0', '0'], outcome.output);
  await assertContained(t, 'cmdline');
});

test("the host's environment does not reach commands: a secret env var of the toolcell process is invisible", async (t) => {
  const outcome = await session.shell(
    `env; echo "direct=[$${CANARY_NAME}]"; cat /proc/self/environ /proc/1/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n'`,
  );
  t.false(outcome.output.includes(CANARY), 'the canary value must not appear anywhere');
  t.regex(outcome.output, /direct=\[\]/);
  t.regex(outcome.output, /PAGER=cat/);
  t.regex(outcome.output, /GIT_TERMINAL_PROMPT=0/);
  const names = await session.shell("env | cut -d= -f1 | sort | tr '\\n' ' '");
  const allowlist = new Set(['COLUMNS', 'GIT_PAGER', 'GIT_TERMINAL_PROMPT', 'HOME', 'LANG', 'LINES', 'PAGER', 'PATH', 'TERM', 'TOOLCELL', 'PWD', 'SHLVL', '_']);
  const extra = names.output
    .trim()
    .split(/\s+/)
    .filter((name) => !allowlist.has(name));
  t.deepEqual(extra, [], 'only allowlisted variables reach a command');
  const inspect = await dockerInspect(containerId);
  const env = ((inspect['Config'] as Record<string, unknown>)['Env'] as string[] | null) ?? [];
  t.false(
    env.some((entry) => entry.includes(CANARY)),
    "the container's own environment does not carry it either",
  );
  await assertContained(t, 'host env');
});

test('writes outside the workspace fail: read-only root, no host path, sibling folders untouched', async (t) => {
  const sibling = join(dirname(session.workspace), `${nonce('sibling')}`);
  const outcome = await session.shell(
    [
      'touch /pwned; echo "root=$?"',
      'touch /etc/pwned; echo "etc=$?"',
      'touch /usr/bin/pwned; echo "usr=$?"',
      'touch ../pwned; echo "parent=$?"',
      `mkdir -p ${sibling} && touch ${sibling}/pwned; echo "sibling=$?"`,
      `touch ${session.workspace}/../pwned; echo "hostparent=$?"`,
      'pwd',
    ].join('; '),
  );
  for (const key of ['root', 'etc', 'usr', 'parent']) t.regex(outcome.output, new RegExp(`${key}=1`), `${key}: ${outcome.output}`);
  // gVisor checks the permission before the read-only mount (the root is still mounted ro: hardening-inside.test.ts).
  t.regex(outcome.output, UNDER_GVISOR ? /Permission denied|Read-only file system/ : /Read-only file system/);
  const hostParent = await readdir(dirname(session.workspace));
  t.false(hostParent.includes('pwned'), 'nothing appeared beside the workspace on the host');
  t.false(hostParent.includes(sibling.split('/').pop()!), 'no sibling folder appeared on the host');
  await assertContained(t, 'outside writes');
});

test('the Docker socket is not reachable from the sandbox', async (t) => {
  const outcome = await session.shell(
    `ls -la /var/run/docker.sock /run/docker.sock 2>&1; find / -xdev -type s 2>/dev/null | head; python3 -c 'import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("/var/run/docker.sock"); print("CONNECTED")
except OSError as e:
    print("refused", e.strerror)'`,
  );
  t.false(outcome.output.includes('CONNECTED'));
  t.regex(outcome.output, /refused/);
  await assertContained(t, 'docker socket');
});

test('commands run as the workspace owner, without capabilities or supplementary groups (docker, sudo)', async (t) => {
  const owner = (await stat(session.workspace)).uid;
  const outcome = await session.shell("id -u; id -G; grep -E '^Cap(Prm|Eff|Bnd|Amb):' /proc/self/status");
  const [shownUid, groups] = outcome.output.trim().split('\n');
  t.is(Number(shownUid), owner, "the workspace owner's uid");
  const ids = groups?.trim().split(/\s+/) ?? [];
  if (UNDER_GVISOR) {
    // Under gVisor the one supplementary group is the call's marker (sandbox/supervisor/proctree.py), which no file or user has.
    t.is(ids.length, 2, `the primary group and the call group: ${groups}`);
    t.true(Number(ids[1]) >= 2_000_000_000, `the call group: ${groups}`);
  } else t.is(ids.length, 1, `one group, the primary: ${groups}`);
  t.notRegex(outcome.output, /\(docker\)|\(sudo\)/);
  // gVisor's status has no CapAmb line (an ambient capability needs a permitted and inheritable one, and those are empty).
  for (const set of UNDER_GVISOR ? ['CapPrm', 'CapEff', 'CapBnd'] : ['CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
    t.regex(outcome.output, new RegExp(`${set}:\\s+0{16}`), set);
  await assertContained(t, 'identity');
});

test('the session container carries the hardening defaults (inspected from the host)', async (t) => {
  const inspect = await dockerInspect(containerId);
  const host = inspect['HostConfig'] as Record<string, unknown>;
  const config = inspect['Config'] as Record<string, unknown>;
  t.is(host['Privileged'], false, 'not privileged');
  t.is(host['NetworkMode'], 'none', 'network none');
  t.is(host['ReadonlyRootfs'], true, 'read-only root');
  t.true(
    ((host['CapDrop'] as string[] | null) ?? []).some((cap) => /^(CAP_)?ALL$/i.test(cap)),
    'all capabilities dropped',
  );
  const added = ((host['CapAdd'] as string[] | null) ?? []).map((cap) => cap.replace(/^CAP_/i, '').toUpperCase());
  t.deepEqual(
    added.filter((cap) => !['SETUID', 'SETGID', 'SETPCAP', 'KILL'].includes(cap)),
    [],
    `only the supervisor's capabilities are added: ${added.join(',')}`,
  );
  t.true(
    ((host['SecurityOpt'] as string[] | null) ?? []).some((opt) => /no-new-privileges(:true|=true)?$/.test(opt)),
    'no-new-privileges',
  );
  t.true(Number(host['PidsLimit']) > 0, 'pids limit');
  t.true(Number(host['Memory']) > 0, 'memory limit');
  t.is(host['MemorySwap'], host['Memory'], 'no swap beyond the memory limit');
  t.is(Number(host['NanoCpus']), 1e9, 'one CPU');
  // Under gVisor the 256 is its kernel's RLIMIT_NPROC; the host's limit only bounds the Sentry (hardening.ts).
  t.is(Number(host['PidsLimit']), UNDER_GVISOR ? gvisorHostPids(256) : 256, 'pids limit 256');
  t.is(Number(host['Memory']), 1024 ** 3, 'memory 1 GiB');
  const ulimits = ((host['Ulimits'] as Array<{ Name: string; Soft: number; Hard: number }> | null) ?? []).map((u) => u.Name);
  t.true(ulimits.includes('fsize'), 'file-size ulimit');
  t.true(ulimits.includes('nofile'), 'open-files ulimit');
  const core = ((host['Ulimits'] as Array<{ Name: string; Soft: number; Hard: number }> | null) ?? []).find((u) => u.Name === 'core');
  t.is(core?.Hard, 0, 'no core dumps');
  t.is((host['LogConfig'] as { Type?: string } | undefined)?.Type, 'none', 'the engine stores no output');
  t.is(host['IpcMode'], 'private', 'private IPC namespace');
  t.is(host['Init'], true, 'an init process');
  t.truthy(host['Tmpfs'], 'tmpfs scratch');
  const mounts = (inspect['Mounts'] as Array<{ Type: string; Source: string; Destination: string; RW: boolean }>) ?? [];
  const binds = mounts.filter((m) => m.Type === 'bind').sort((a, b) => a.Destination.localeCompare(b.Destination));
  t.deepEqual(
    binds.map((m) => m.Destination),
    ['/workspace', '/workspace/.toolcell/background'],
    'only the workspace is bind-mounted (and its background-log folder, back over the state-folder cover)',
  );
  // As root, the engine gets private mount points made from the folders toolcell opened and checked.
  const expectedSources =
    process.getuid?.() === 0
      ? [/^\/run\/toolcell\/mounts\/\d+-[0-9a-f]{16}$/, /^\/run\/toolcell\/mounts\/\d+-[0-9a-f]{16}$/]
      : [new RegExp(`^${session.workspace}$`), new RegExp(`^${session.workspace}/\\.toolcell/background/[0-9a-f]{12}$`)];
  binds.forEach((m, i) => t.regex(m.Source, expectedSources[i]!, m.Destination));
  t.true(
    mounts.some((m) => m.Type === 'tmpfs' && m.Destination === '/workspace/.toolcell' && m.RW === false),
    'the state folder is covered by a read-only tmpfs',
  );
  t.false(
    mounts.some((m) => /docker\.sock/.test(m.Source)),
    'no Docker socket',
  );
  t.is(config['Tty'], false);
  t.truthy(config['Labels'], 'containers carry labels');
});

test("commands run as the workspace owner's uid when a non-root user owns it, never as root", async (t) => {
  const { chown } = await import('node:fs/promises');
  const workspace = await makeTempDir(t);
  await chown(workspace, 4242, 4242);
  const owned = await SandboxSession.open({ workspace, timeoutSeconds: 10 });
  t.teardown(() => owned.close());
  const outcome = await owned.shell('id -u; id -g; touch made-here; stat -c "%u" made-here');
  t.deepEqual(outcome.output.trim().split(/\s+/), ['4242', '4242', '4242'], outcome.text);
});

test('the `runtime` option (gVisor: runsc) is passed to the engine, with every other protection kept', async (t) => {
  const { ShellService } = await import('../../src/shell/shell-service.js');
  const workspace = await makeTempDir(t);
  const service = await ShellService.create({ docker: { runtime: 'runc' } });
  t.teardown(() => service.close());
  const shell = await service.openSession({ sandbox: 'docker', workspaceRoot: workspace });
  t.regex(shell.describe(), /runtime runc/);
  const result = await shell.run({ command: "cat /etc/hostname; grep -E '^(NoNewPrivs|CapEff)' /proc/self/status" });
  const id = /^([0-9a-f]{12})$/m.exec(result.output)?.[1] ?? '';
  const inspect = await dockerInspect(id);
  const host = inspect['HostConfig'] as Record<string, unknown>;
  t.is(host['Runtime'], 'runc');
  t.is(host['NetworkMode'], 'none');
  t.is(host['ReadonlyRootfs'], true);
  t.regex(result.output, /NoNewPrivs:\s+1/);
  t.regex(result.output, /CapEff:\s+0{16}/);
});

// Last: until the warm pool stops retrying a refused workspace, this leaves a spinning thread behind.
test('a workspace that would hand over the host (a kernel filesystem) is refused with an error, promptly', async (t) => {
  const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'hung'> =>
    Promise.race([promise, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), ms).unref())]);
  for (const workspace of ['/proc']) {
    const risky = await SandboxSession.open({ workspace, timeoutSeconds: 10 });
    const outcome = await within(risky.shell('ls /workspace | head -3'), 30_000);
    void within(risky.close(), 10_000);
    if (outcome === 'hung') {
      t.fail(`${workspace}: the call neither ran nor failed within 30 s (it must fail closed with a clear error)`);
      continue;
    }
    t.is(outcome.status, 'error', `${workspace}: ${outcome.text}`);
    t.regex(outcome.text, /Refusing to mount/, workspace);
  }
  await session.assertAlive(t);
});
