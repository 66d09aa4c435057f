/**
 * The mechanism behind "the container mounts the folder toolcell checked",
 * step by step and without a race: prepare (the checks), then replace the
 * path with a symlink to another host folder, then start. With private mounts
 * (toolcell as root) the checked folder is mounted anyway; without them the
 * supervisor refuses before anything runs.
 */
import anyTest from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isToolcellError } from '../../../src/errors.js';
import { SandboxContainer } from '../../../src/backends/docker/container.js';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import { buildContainerSpec } from '../../../src/backends/docker/hardening.js';
import { imageExists, sandboxImageTag } from '../../../src/backends/docker/image.js';
import { ownerLabels } from '../../../src/backends/docker/labels.js';
import { resolveDockerBackendOptions } from '../../../src/backends/docker/options.js';
import { PinnedDirectory } from '../../../src/backends/docker/pinned-dir.js';
import { PrivateMounts } from '../../../src/backends/docker/private-mounts.js';
import { prepareWorkspace } from '../../../src/backends/docker/workspace-dirs.js';
import { makeWorkspace, requireDocker, createTestBackend } from '../../helpers/docker.js';
import { giveWorkspaceToSandboxUser } from '../../helpers/test-runtime.js';

const test = await requireDocker(anyTest, 'sandbox/workspace-mount');
const options = resolveDockerBackendOptions({});
const isRoot = process.getuid?.() === 0;

/** `outer/sub` (the workspace, marker "checked") and a host folder elsewhere (marker "host"). */
async function layout(t: import('ava').ExecutionContext): Promise<{ sub: string; elsewhere: string }> {
  const outer = await makeWorkspace(t, 'toolcell-mnt-outer-');
  const elsewhere = await makeWorkspace(t, 'toolcell-mnt-elsewhere-');
  const sub = join(outer, 'sub');
  await mkdir(sub);
  await writeFile(join(sub, 'marker'), 'checked\n', { mode: 0o644 });
  await writeFile(join(elsewhere, 'marker'), 'host\n', { mode: 0o644 });
  return { sub, elsewhere };
}

/**
 * What an attacker with write access to `outer` does between the checks and
 * the start: it can list `sub/.toolcell/background/` and so learn the new log
 * folder's name, which it creates in the folder it swaps in.
 */
async function swap(sub: string, elsewhere: string, key: string): Promise<void> {
  await mkdir(join(elsewhere, '.toolcell', 'background', key), { recursive: true });
  await rename(sub, `${sub}.moved`);
  await symlink(elsewhere, sub);
}

async function start(t: import('ava').ExecutionContext, mounts: PrivateMounts, sub: string, elsewhere: string): Promise<SandboxContainer> {
  t.true(await imageExists({}, sandboxImageTag()));
  const prepared = await prepareWorkspace({ workspaceRoot: sub, user: 'auto', mounts });
  await swap(sub, elsewhere, prepared.background.key);
  const spec = buildContainerSpec({ image: sandboxImageTag(), options, identity: prepared.identity, workspace: prepared, labels: ownerLabels({}) });
  try {
    const container = await SandboxContainer.start({
      docker: createEngineClient(),
      engine: {},
      spec,
      name: `toolcell-test-${process.pid}-${Date.now()}`,
      timeoutMs: 30_000,
    });
    t.teardown(() => container.remove());
    return container;
  } finally {
    await (await prepared.release()).close();
  }
}

/** Runs `cat` of the marker through the supervisor; resolves with its output. */
function catMarker(container: SandboxContainer): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    container.connection.startCall(
      { command: 'cat /workspace/marker', cwd: '.', env: { PATH: '/usr/bin:/bin' }, mode: 'pipes', stdin: false, background: false },
      undefined,
      {
        onSpawned: () => undefined,
        onData: (chunk) => {
          out += chunk.toString('utf8');
        },
        onSkipped: () => undefined,
        onExit: () => resolve(out),
        onSpawnFailed: (message) => resolve(`spawn failed: ${message}`),
      },
    );
  });
}

async function modes(folder: string): Promise<string> {
  return `${(await stat(folder)).mode.toString(8)} ${(await stat(join(folder, 'marker'))).mode.toString(8)}`;
}

test('as root, the engine mounts the checked folder through a private mount even after its path was swapped', async (t) => {
  const { sub, elsewhere } = await layout(t);
  const mounts = new PrivateMounts({ enabled: true });
  t.is(mounts.available, isRoot, 'private mounts are used exactly when toolcell is root');
  const before = await modes(elsewhere);
  if (!isRoot) {
    await t.throwsAsync(start(t, mounts, sub, elsewhere), { message: /not the one toolcell checked/ });
    return;
  }
  const container = await start(t, mounts, sub, elsewhere);
  t.is(await catMarker(container), 'checked\n', 'the checked folder is mounted');
  t.is(await modes(elsewhere), before, 'the folder swapped in got nothing');
  t.is(await modes(`${sub}.moved`), '40755 100644', 'and the checked folder keeps its modes: nothing is granted in a workspace');
});

test('without private mounts, a container that mounted another folder is refused before anything runs', async (t) => {
  const { sub, elsewhere } = await layout(t);
  const mounts = new PrivateMounts({ enabled: false });
  const before = await modes(elsewhere);
  const error = await t.throwsAsync(start(t, mounts, sub, elsewhere));
  t.true(isToolcellError(error) && (error as { code?: string }).code === 'sandbox_unavailable', String(error));
  t.regex(error?.message ?? '', /Refusing to start the sandbox: the folder mounted in the sandbox is not the one toolcell checked/);
  t.is(await modes(elsewhere), before, 'nothing reached the folder swapped in');
});

test('a later container of the same backend must find the folder its workspace path first named', async (t) => {
  const { sub } = await layout(t);
  await giveWorkspaceToSandboxUser(sub);
  await using backend = await createTestBackend({ warmPool: 0, removeLeftovers: false });
  const first = await backend.openSession({ sessionId: 'first', workspaceRoot: sub });
  await first.close();
  await rename(sub, `${sub}.moved`);
  await mkdir(sub);
  await t.throwsAsync(backend.openSession({ sessionId: 'second', workspaceRoot: sub }), { message: /is no longer the workspace this sandbox started with/ });
});

test('private mount points left by a toolcell process that died are removed by the next start', async (t) => {
  if (!isRoot) {
    t.false(new PrivateMounts({ enabled: true }).available, 'no private mounts without root');
    return;
  }
  const folder = await makeWorkspace(t, 'toolcell-mnt-stale-');
  const script = `import { PinnedDirectory } from ${JSON.stringify(new URL('../../../src/backends/docker/pinned-dir.js', import.meta.url).href)};
import { PrivateMounts } from ${JSON.stringify(new URL('../../../src/backends/docker/private-mounts.js', import.meta.url).href)};
const target = await new PrivateMounts({ enabled: true }).bind(await PinnedDirectory.open(${JSON.stringify(folder)}));
console.log(target);
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  // A child that fails (a wrong import, no mount) exits instead of printing: the test fails rather than waits.
  const target = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the mounting process exited (${code}) before printing its mount point`)));
  });
  t.regex(target, new RegExp(`^/run/toolcell/mounts/${child.pid}-`));
  child.kill('SIGKILL');
  await once(child, 'exit');
  const mounted = async (): Promise<boolean> => (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').some((line) => line.split(' ')[4] === target);
  t.true(await mounted(), 'the dead process left its mount behind');
  await PrivateMounts.removeStale();
  t.false(await mounted(), 'removed');
  await t.throwsAsync(stat(target), { code: 'ENOENT' });
});

test('once private mounts worked, a failed one fails its start with the reason and later starts still get private mounts', async (t) => {
  if (!isRoot) {
    t.false(new PrivateMounts({ enabled: true }).available, 'private mounts need root');
    return;
  }
  const { sub } = await layout(t);
  const mounts = new PrivateMounts({ enabled: true });
  const good = await PinnedDirectory.open(sub);
  t.teardown(() => good.close());
  const first = await mounts.bind(good);
  t.truthy(first, 'the first mount works');
  await mounts.release([first!]);
  // A folder whose descriptor is gone cannot be mounted: a failure of this one start.
  const gone = await PinnedDirectory.open(sub);
  await gone.close();
  const error = await t.throwsAsync(mounts.bind(gone));
  t.true(isToolcellError(error) && (error as { code?: string }).code === 'sandbox_unavailable', String(error));
  t.regex(error?.message ?? '', /Cannot make the workspace's private mount point/);
  t.true(mounts.available, 'private mounts stay on: falling back to path mounts would drop their protection for every later start');
  const later = await mounts.bind(good);
  t.truthy(later, 'a later start gets a private mount again');
  await mounts.release([later!]);
});
