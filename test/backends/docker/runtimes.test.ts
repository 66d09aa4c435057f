/**
 * Choosing a sandbox runtime: one backend runs each session on the runtime
 * it names (a hosting tenant's), a session with egress gets the runtime's
 * egress companion, a runtime the engine lacks is refused before any
 * container starts, a root-owned workspace is refused under gVisor, and
 * `sandbox setup --runtime runsc` registers gVisor in daemon.json without
 * touching anything else, once.
 */
import anyTest from 'ava';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import { registerRuntimes } from '../../../src/backends/docker/setup-runtime.js';
import { ToolErrorType } from '../../../src/errors.js';
import { runCli } from '../../helpers/cli.js';
import {
  createTestBackend,
  eventually,
  makeWorkspace,
  requireDocker,
  runCommand,
  sessionId,
  type SandboxFixture,
  useSandboxBackend,
} from '../../helpers/docker.js';
import { requireGvisor } from '../../helpers/test-runtime.js';

const docker = await requireDocker(anyTest, 'sandbox/runtimes');
const gated = await requireGvisor(docker, 'sandbox/runtimes');
const test = gated.serial;

/** runc itself as the backend's runtime, so that a session naming runsc is the exception. */
const sandbox: SandboxFixture = useSandboxBackend(gated, { runtime: 'runc', warmPool: 0 });

/** A workspace an ordinary user owns: gVisor refuses a root-owned one (its commands would run as uid 0). */
async function userWorkspace(t: import('ava').ExecutionContext): Promise<string> {
  const dir = await makeWorkspace(t);
  await chown(dir, 10001, 10001);
  return dir;
}

async function runtimeOf(containerId: string): Promise<string> {
  return String((await createEngineClient().getContainer(containerId).inspect()).HostConfig.Runtime);
}

test('one backend runs each session on its own runtime: runsc beside runc, at the same time', async (t) => {
  const { backend } = sandbox;
  const gvisor = await backend.openSession({ sessionId: sessionId('gvisor'), workspaceRoot: await userWorkspace(t), limits: { runtime: 'runsc' } });
  t.teardown(() => gvisor.close());
  const plain = await backend.openSession({ sessionId: sessionId('runc'), workspaceRoot: await makeWorkspace(t) });
  t.teardown(() => plain.close());
  const [inGvisor, inRunc] = await Promise.all([runCommand(gvisor, 'dmesg | head -1; cat /etc/hostname'), runCommand(plain, 'uname -r; cat /etc/hostname')]);
  t.regex(inGvisor.stdout, /Starting gVisor/);
  t.notRegex(inRunc.stdout, /gVisor/);
  t.is(await runtimeOf(/^[0-9a-f]{12}$/m.exec(inGvisor.stdout)![0]), 'runsc');
  t.is(await runtimeOf(/^[0-9a-f]{12}$/m.exec(inRunc.stdout)![0]), 'runc');
  t.regex(backend.describe({ runtime: 'runsc' }), /runtime runsc\)$/);
  t.regex(backend.describe(), /runtime runc\)$/);
});

test('under gVisor a root-owned workspace is refused (its commands would run as uid 0, which gVisor does not keep from init and the supervisor), naming the way out', async (t) => {
  const workspaceRoot = await makeWorkspace(t, 'toolcell-root-ws-');
  await chown(workspaceRoot, 0, 0);
  const error = await t.throwsAsync(sandbox.backend.openSession({ sessionId: sessionId(), workspaceRoot, limits: { runtime: 'runsc' } }));
  t.is((error as { code?: string }).code, ToolErrorType.SANDBOX_UNAVAILABLE);
  t.regex(
    error!.message,
    /belongs to root, so its commands would run as uid 0, which gVisor \(runsc\) does not keep away from the sandbox's init and supervisor/,
  );
  t.regex(error!.message, /owned by a non-root user .* or the runc runtime/);
  // The same workspace given to an ordinary user runs, as that user.
  await chown(workspaceRoot, 4242, 4242);
  const session = await sandbox.backend.openSession({ sessionId: sessionId(), workspaceRoot, limits: { runtime: 'runsc' } });
  t.teardown(() => session.close());
  t.is((await runCommand(session, 'id -u', { mode: 'pipes' })).stdout, '4242\n');
});

test('a runtime the engine lacks is refused at openSession, in one line saying how to set it up, before any container starts', async (t) => {
  const { backend } = sandbox;
  const workspaceRoot = await makeWorkspace(t);
  const before = (await createEngineClient().listContainers({ all: true, filters: { label: [`dev.toolcell.backend=${backend.backendId}`] } })).length;
  const error = await t.throwsAsync(backend.openSession({ sessionId: sessionId(), workspaceRoot, limits: { runtime: 'toolcell-no-such-runtime' } }));
  t.is((error as { code?: string }).code, ToolErrorType.SANDBOX_UNAVAILABLE);
  t.notRegex(error!.message, /\n/, 'one line');
  t.regex(error!.message, /no runtime named toolcell-no-such-runtime \(it has: .*runsc/);
  const after = (await createEngineClient().listContainers({ all: true, filters: { label: [`dev.toolcell.backend=${backend.backendId}`] } })).length;
  t.is(after, before, 'no container was started for it');
  const runsc = await t.throwsAsync(createTestBackend({ runtime: 'runsc-not-set-up', warmPool: 0 }));
  t.regex(runsc!.message, /daemon\.json/);
});

test('a session with egress under gVisor runs on runsc-egress and reaches only what its allow list names', async (t) => {
  await using backend = await createTestBackend({
    runtime: 'runsc',
    warmPool: 0,
    egress: { allow: ['allowed.test:9'], hosts: { 'allowed.test': '127.0.0.1' } },
  });
  const session = await backend.openSession({ sessionId: sessionId('egress'), workspaceRoot: await userWorkspace(t) });
  t.teardown(() => session.close());
  const result = await runCommand(session, 'cat /etc/hostname; echo "proxy=$HTTPS_PROXY"; curl -sS -m 5 https://example.com/ 2>&1 | head -1; dmesg | head -1');
  t.is(await runtimeOf(/^[0-9a-f]{12}$/m.exec(result.stdout)![0]), 'runsc-egress');
  t.regex(result.stdout, /proxy=http:\/\/\d+\.\d+\.\d+\.\d+:\d+/);
  t.regex(result.stdout, /403|refused|Forbidden/i, 'a host not on the list is refused by the proxy');
  t.regex(result.stdout, /Starting gVisor/);
});

test('registerRuntimes writes runsc and runsc-egress into daemon.json, keeps every other setting, and changes nothing the second time', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-daemon-json-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'daemon.json');
  await writeFile(file, JSON.stringify({ 'default-runtime': 'runc', runtimes: { kata: { path: '/usr/bin/kata' } }, 'log-level': 'warn' }));
  const wanted = {
    runsc: { path: '/usr/bin/runsc', runtimeArgs: ['--network=none'] },
    'runsc-egress': { path: '/usr/bin/runsc', runtimeArgs: ['--network=host'] },
  };
  t.deepEqual(await registerRuntimes(file, wanted), ['runsc', 'runsc-egress']);
  const written = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  t.is(written['default-runtime'], 'runc', 'the default runtime is left alone');
  t.is(written['log-level'], 'warn');
  t.deepEqual(written['runtimes'], { kata: { path: '/usr/bin/kata' }, ...wanted });
  t.deepEqual(await registerRuntimes(file, wanted), [], 'nothing to change the second time');
  await writeFile(file, '{"runtimes": ');
  await t.throwsAsync(registerRuntimes(file, wanted), { message: /not valid JSON/ });
  t.is(await readFile(file, 'utf8'), '{"runtimes": ', 'a file the engine would refuse is left as it was');
});

test('sandbox setup --runtime runsc on a machine where it is set up changes nothing and reloads nothing; status lists the runtimes', async (t) => {
  const before = await readFile('/etc/docker/daemon.json', 'utf8');
  const setup = await runCli(['sandbox', 'setup', '--runtime', 'runsc']);
  t.is(setup.code, 0, setup.stderr);
  t.regex(setup.stderr, /already registers runsc and runsc-egress/);
  t.notRegex(setup.stderr, /reloading/);
  t.regex(setup.stderr, /checked: a container on runsc prints "Starting gVisor/);
  t.is(await readFile('/etc/docker/daemon.json', 'utf8'), before);
  t.regex(setup.stdout, /^runtimes: .*runc \(default\).*runsc \(gVisor, --network=none\).*runsc-egress \(gVisor, --network=/m);
  t.regex(setup.stdout, /^runtime: {4}\S+ \(/m);
  const status = JSON.parse((await runCli(['sandbox', 'status', '--json'])).stdout) as { runtimes: Array<{ name: string; gvisor: boolean }> };
  t.true(status.runtimes.some((runtime) => runtime.name === 'runsc' && runtime.gvisor));
  const other = await runCli(['sandbox', 'setup', '--runtime', 'kata']);
  t.is(other.code, 2);
  t.regex(other.stderr, /only runsc \(gVisor\) can be set up here/);
  t.true(
    await eventually(
      async () => (await createEngineClient().listContainers({ all: true, filters: { label: ['dev.toolcell.setup-check=1'] } })).length === 0,
      10_000,
    ),
  );
});
