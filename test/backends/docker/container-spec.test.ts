import test from 'ava';
import { buildContainerSpec, gvisorHostPids } from '../../../src/backends/docker/hardening.js';
import { resolveDockerBackendOptions } from '../../../src/backends/docker/options.js';

const workspace = {
  workspace: { source: '/run/toolcell/mounts/aa', expected: { dev: 2049n, ino: 12n } },
  background: { source: '/run/toolcell/mounts/bb', expected: { dev: 2049n, ino: 99n }, hostPath: '/srv/ws/.toolcell/background/k1', key: 'k1' },
};
const identity = { uid: 10001, gid: 10001 };

test('the default container request carries every hardening setting', (t) => {
  const spec = buildContainerSpec({ image: 'img', options: resolveDockerBackendOptions({}), identity, workspace, labels: { a: 'b' } });
  const host = spec.HostConfig!;
  t.is(host.NetworkMode, 'none');
  t.true(host.ReadonlyRootfs);
  t.deepEqual(host.CapDrop, ['ALL']);
  t.deepEqual(host.CapAdd, ['SETUID', 'SETGID', 'SETPCAP', 'KILL']);
  t.deepEqual(host.SecurityOpt, ['no-new-privileges']);
  t.is(host.PidsLimit, 256);
  t.is(host.Memory, host.MemorySwap);
  t.is(host.NanoCpus, 1e9);
  t.true(host.Init);
  t.is(host.LogConfig?.Type, 'none');
  t.deepEqual(
    host.Ulimits?.map((u) => u.Name),
    ['fsize', 'nofile', 'core', 'sigpending', 'msgqueue'],
  );
  t.regex(host.Tmpfs?.['/tmp'] ?? '', /nosuid,nodev.*size=268435456/);
  t.regex(host.Tmpfs?.['/home/sandbox'] ?? '', /uid=10001,gid=10001/);
  t.deepEqual(
    host.Mounts?.map((m) => [m.Type, m.Source, m.Target, m.ReadOnly]),
    [
      ['bind', '/run/toolcell/mounts/aa', '/workspace', false],
      ['tmpfs', '', '/workspace/.toolcell', true],
      ['bind', '/run/toolcell/mounts/bb', '/workspace/.toolcell/background', false],
    ],
  );
  const arg = (name: string): string | undefined => spec.Cmd?.[spec.Cmd.indexOf(name) + 1];
  t.is(arg('--expect-workspace'), '2049:12', 'the supervisor checks the workspace mount is the checked folder');
  t.is(arg('--expect-log-dir'), '2049:99', 'and the log folder mount');
  t.is(arg('--log-dir'), '/workspace/.toolcell/background');
  t.true(host.MaskedPaths?.includes('/proc/cmdline'), '/proc/cmdline is masked');
  t.true(host.MaskedPaths?.includes('/proc/kcore'), "the engine's default masks are kept");
  t.is(host.Runtime, undefined);
  t.is(spec.User, '0:0');
  t.true(spec.StdinOnce);
  t.false(spec.Tty);
  t.deepEqual(spec.Labels, { a: 'b' });
  t.false(spec.Cmd?.includes('--grant-acl'), 'nothing in the workspace is given ACL entries');
});

test('options change limits, runtime and protections', (t) => {
  const options = resolveDockerBackendOptions({
    runtime: 'runsc',
    limits: { cpus: 0.5, pids: 32 },
    hardening: { network: 'bridge', hideStateDir: false, securityOpt: ['apparmor=unconfined'] },
  });
  const spec = buildContainerSpec({ image: 'img', options, identity: { uid: 1000, gid: 1000 }, workspace, labels: {} });
  t.is(spec.HostConfig?.Runtime, 'runsc');
  t.is(spec.HostConfig?.NanoCpus, 5e8);
  t.is(spec.HostConfig?.PidsLimit, 32);
  t.is(spec.HostConfig?.NetworkMode, 'bridge');
  t.deepEqual(spec.HostConfig?.SecurityOpt, ['no-new-privileges', 'apparmor=unconfined']);
  t.is(spec.HostConfig?.Mounts?.length, 1);
  t.false(spec.Cmd?.includes('--expect-log-dir'), 'no separate log mount to check');
  t.is(spec.Cmd?.[spec.Cmd.indexOf('--log-dir') + 1], '/workspace/.toolcell/background/k1', "the container's own log folder, inside the visible state folder");
  t.false(spec.Cmd?.includes('--grant-acl'));
  t.deepEqual(spec.Cmd?.slice(3, 7), ['--uid', '1000', '--gid', '1000']);
});

test("whatever the image says, the supervisor starts as toolcell's: no image entry point or health check, the image's ENV blanked", (t) => {
  const spec = buildContainerSpec({
    image: 'custom',
    imageEnv: ['LD_PRELOAD', 'PYTHONPATH', 'PATH', 'LANG'],
    options: resolveDockerBackendOptions({}),
    identity,
    workspace,
    labels: {},
  });
  t.deepEqual(spec.Entrypoint, []);
  t.deepEqual(spec.Healthcheck, { Test: ['NONE'] });
  t.is(spec.User, '0:0');
  t.true(spec.Env?.includes('LD_PRELOAD='));
  t.true(spec.Env?.includes('PYTHONPATH='));
  t.true(spec.Env?.includes('LANG=C.UTF-8'));
  t.true(spec.Env?.includes('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'));
});

test('under gVisor the pids limit is its kernel’s RLIMIT_NPROC, the host’s only bounds the Sentry, and the mounts are not compared by inode', (t) => {
  const spec = buildContainerSpec({
    image: 'img',
    options: resolveDockerBackendOptions({}),
    identity,
    workspace,
    labels: {},
    runtime: { name: 'runsc', gvisor: true },
  });
  const host = spec.HostConfig!;
  t.is(host.Runtime, 'runsc');
  t.is(host.PidsLimit, gvisorHostPids(256));
  // No sigpending or msgqueue: gVisor's kernel keeps those budgets itself, and a fork storm's kill left processes under them there.
  t.deepEqual(
    host.Ulimits?.map((u) => [u.Name, u.Soft]),
    [
      ['fsize', 1024 ** 3],
      ['nofile', 1024],
      ['core', 0],
      ['nproc', 256],
    ],
  );
  t.false(spec.Cmd?.includes('--expect-workspace'));
  t.false(spec.Cmd?.includes('--expect-log-dir'));
});
