/**
 * Commands run as the workspace owner's uid and gid, so they can write
 * whatever the owner can and what they create belongs to the owner; nothing
 * in the workspace is rewritten for them (test/security/workspace-owner.test.ts
 * checks owners, modes and ACLs byte for byte).
 */
import anyTest from 'ava';
import { chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeWorkspace, requireDocker, runCommand, useSandboxBackend } from '../../helpers/docker.js';
import { UNDER_GVISOR } from '../../helpers/test-runtime.js';

const test = await requireDocker(anyTest, 'sandbox/workspace-identity');
const sandbox = useSandboxBackend(test);
const hostIsRoot = process.getuid?.() === 0;

/** Under gVisor a root-owned workspace is refused (its commands would run as uid 0: docker-backend.ts), in words that say what to do. */
async function refusedUnderGvisor(t: import('ava').ExecutionContext, workspaceRoot: string): Promise<void> {
  await chown(workspaceRoot, 0, 0);
  await t.throwsAsync(sandbox.session(t, { workspaceRoot }), {
    message: /belongs to root, so its commands would run as uid 0, which gVisor \(runsc\).*owned by a non-root user/,
  });
}

test('a root-owned workspace: commands run as uid 0 without capabilities and can write everywhere in it', async (t) => {
  if (!hostIsRoot) {
    t.pass('needs a root host user to create a root-owned workspace');
    return;
  }
  const workspaceRoot = await makeWorkspace(t);
  if (UNDER_GVISOR) return refusedUnderGvisor(t, workspaceRoot);
  await mkdir(join(workspaceRoot, 'src', 'deep'), { recursive: true });
  await writeFile(join(workspaceRoot, 'src', 'deep', 'existing.txt'), 'old\n', { mode: 0o644 });
  t.is((await stat(workspaceRoot)).uid, 0);
  const session = await sandbox.session(t, { workspaceRoot });
  const result = await runCommand(
    session,
    "id -u; grep -E '^Cap(Prm|Eff|Bnd):' /proc/self/status | tr -s '\\t' ' '; echo new > created.txt && echo more >> src/deep/existing.txt && mkdir -p src/deep/newdir && echo x > src/deep/newdir/f && echo ok",
    { mode: 'pipes' },
  );
  t.is(result.stderr, '');
  t.is(result.stdout, '0\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\nCapBnd: 0000000000000000\nok\n');
  t.is(await readFile(join(workspaceRoot, 'created.txt'), 'utf8'), 'new\n');
  t.is(await readFile(join(workspaceRoot, 'src', 'deep', 'existing.txt'), 'utf8'), 'old\nmore\n');
  t.is((await stat(join(workspaceRoot, 'created.txt'))).uid, 0, 'files written in the sandbox belong to the workspace owner, root');
});

test('a file the host creates after the session started is writable too', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  if (UNDER_GVISOR) return refusedUnderGvisor(t, workspaceRoot);
  const session = await sandbox.session(t, { workspaceRoot });
  await writeFile(join(workspaceRoot, 'later.txt'), 'host\n', { mode: 0o644 });
  const result = await runCommand(session, 'echo sandbox >> later.txt && cat later.txt', { mode: 'pipes' });
  t.is(result.stdout, 'host\nsandbox\n', result.stderr);
});

test('a workspace owned by a regular user: commands run as that user', async (t) => {
  if (!hostIsRoot) {
    t.pass('needs a root host user to chown the workspace');
    return;
  }
  const workspaceRoot = await makeWorkspace(t);
  await chown(workspaceRoot, 4242, 4343);
  const session = await sandbox.session(t, { workspaceRoot });
  const result = await runCommand(session, 'id -u; id -g; echo hi > mine.txt && echo ok', { mode: 'pipes' });
  t.is(result.stdout, '4242\n4343\nok\n', result.stderr);
  const info = await stat(join(workspaceRoot, 'mine.txt'));
  t.is(info.uid, 4242);
  t.is(info.gid, 4343);
});

for (const root of ['/', '/run', '/proc', '/dev/shm', '/tmp', '/var/tmp']) {
  test(`a workspace of ${root} is refused (it would hand the container the host)`, async (t) => {
    const error = await t.throwsAsync(sandbox.backend.openSession({ sessionId: `refused-${root.replace(/\W/g, '')}`, workspaceRoot: root }));
    t.is((error as { code?: string }).code, 'policy_violation');
    t.regex(error?.message ?? '', /Refusing to mount/);
  });
}
