/**
 * What the supervisor says besides command output reaches the user: its LOG
 * frames as debug lines when TOOLCELL_DEBUG is set (and nothing about the
 * workspace's permissions, which it never changes), and a supervisor of
 * another protocol version as a refusal that says to rebuild the image.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { chown, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isToolcellError } from '../../../src/errors.js';
import { SandboxContainer } from '../../../src/backends/docker/container.js';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import { buildContainerSpec } from '../../../src/backends/docker/hardening.js';
import { sandboxImageTag } from '../../../src/backends/docker/image.js';
import { LABELS, ownerLabels } from '../../../src/backends/docker/labels.js';
import { resolveDockerBackendOptions } from '../../../src/backends/docker/options.js';
import { PrivateMounts } from '../../../src/backends/docker/private-mounts.js';
import { prepareWorkspace } from '../../../src/backends/docker/workspace-dirs.js';
import { containersWithLabel, makeWorkspace, requireDocker, runCommand, useSandboxBackend } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/supervisor-diagnostics');
const MiB = 1024 * 1024;
const sandbox = useSandboxBackend(test, { limits: { workspaceGrowthBytes: 8 * MiB } });
const hostIsRoot = process.getuid?.() === 0;

/** Collects what this process writes to stderr until the test ends. */
function captureStderr(t: ExecutionContext): string[] {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  t.teardown(() => {
    process.stderr.write = write;
  });
  return lines;
}

test.serial("with TOOLCELL_DEBUG, the supervisor's LOG frames are printed (here: why it killed a command)", async (t) => {
  const stderr = captureStderr(t);
  process.env['TOOLCELL_DEBUG'] = '1';
  t.teardown(() => delete process.env['TOOLCELL_DEBUG']);
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'for i in $(seq 1 8); do head -c 4M /dev/zero > fill.$i || break; done', { mode: 'pipes' });
  t.is(result.status.signal, 'SIGKILL');
  const debug = stderr.filter((line) => line.startsWith('toolcell: sandbox debug: '));
  t.true(
    debug.some(
      (line) => line.includes(`${session.containerId}: warning: call `) && line.includes("toolcell: killed: this command grew the workspace's disk use"),
    ),
    debug.join('\n'),
  );
});

test.serial('without TOOLCELL_DEBUG, LOG frames stay quiet', async (t) => {
  const stderr = captureStderr(t);
  delete process.env['TOOLCELL_DEBUG'];
  const session = await sandbox.session(t);
  const result = await runCommand(session, 'for i in $(seq 1 8); do head -c 4M /dev/zero > fill.$i || break; done', { mode: 'pipes' });
  t.is(result.status.signal, 'SIGKILL');
  t.deepEqual(
    stderr.filter((line) => line.includes('sandbox debug')),
    [],
  );
});

test.serial(
  "a file of another user keeps that user's permissions: commands (the owner's uid, no capabilities) cannot read it, and nothing is warned or changed",
  async (t) => {
    if (!hostIsRoot) {
      t.pass('needs a root host user to give a file to another user');
      return;
    }
    const stderr = captureStderr(t);
    const workspaceRoot = await makeWorkspace(t);
    await writeFile(join(workspaceRoot, 'foreign.txt'), 'private\n', { mode: 0o600 });
    await chown(join(workspaceRoot, 'foreign.txt'), 4242, 4242);
    const before = await stat(join(workspaceRoot, 'foreign.txt'));
    const session = await sandbox.session(t, { workspaceRoot });
    const read = await runCommand(session, 'cat foreign.txt', { mode: 'pipes' });
    t.regex(read.stderr, /Permission denied/, 'uid 0 without CAP_DAC_OVERRIDE has only the owner and other bits');
    t.deepEqual(
      stderr.filter((line) => line.startsWith('toolcell: warning')),
      [],
    );
    const after = await stat(join(workspaceRoot, 'foreign.txt'));
    t.deepEqual([after.uid, after.gid, after.mode, after.ctimeMs], [before.uid, before.gid, before.mode, before.ctimeMs]);
  },
);

test.serial('a supervisor of another protocol version is refused with the way out, and its container removed', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const mounts = new PrivateMounts({ enabled: false });
  const prepared = await prepareWorkspace({ workspaceRoot, user: 'auto', mounts });
  const marker = `version-${process.pid}-${Date.now()}`;
  const spec = buildContainerSpec({
    image: sandboxImageTag(),
    options: resolveDockerBackendOptions({}),
    identity: prepared.identity,
    workspace: prepared,
    labels: ownerLabels({ [LABELS.session]: marker }),
  });
  // The image's own supervisor, told it speaks version 99: as an image built by another toolcell would.
  const [python, , script, ...args] = spec.Cmd as string[];
  const patched = `import sys; sys.path.insert(0, ${JSON.stringify(script!.replace(/\/[^/]+$/, ''))}); sys.argv = [${JSON.stringify(script)}] + sys.argv[1:]; import protocol; protocol.PROTOCOL_VERSION = 99; import supervisor; sys.exit(supervisor.main(sys.argv[1:]))`;
  try {
    const error = await t.throwsAsync(
      SandboxContainer.start({
        docker: createEngineClient(),
        engine: {},
        spec: { ...spec, Cmd: [python!, '-B', '-c', patched, ...args] },
        name: `toolcell-test-${marker}`,
        timeoutMs: 30_000,
      }),
    );
    t.true(isToolcellError(error));
    t.is((error as { code?: string }).code, 'sandbox_unavailable');
    t.regex(error!.message, /speaks protocol version 99, this toolcell speaks version 1: rebuild the image with `toolcell sandbox build`/);
    t.deepEqual(await containersWithLabel(LABELS.session, marker), []);
  } finally {
    await (await prepared.release()).close();
  }
});
