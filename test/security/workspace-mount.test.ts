/**
 * The folder a container mounts is the folder toolcell checked. The engine
 * resolves a bind source path again when the container starts, so a sandbox
 * whose workspace encloses another one can swap `sub` and a symlink to a host
 * folder in a loop while toolcell starts a sandbox on `sub`: the check sees
 * the folder, the engine mounts the host folder, and the ACL grant then
 * reaches it. Every run here must mount exactly the checked folder (or
 * refuse to start), and the host folder must never be changed by a run that
 * checked `sub`.
 */
import anyTest from 'ava';
import { mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LABELS } from '../../src/backends/docker/labels.js';
import { SANDBOX_TEST_ENV, makeWorkspace, requireDocker, runCommand, createTestBackend } from '../helpers/docker.js';
import { dockerInspect } from '../helpers/security.js';
import { giveWorkspaceToSandboxUser } from '../helpers/test-runtime.js';

const test = await requireDocker(anyTest, 'security/workspace-mount');

/** Fresh backends (as fresh `toolcell` runs would be) started on `sub` while the enclosing sandbox swaps it. */
const RUNS = 20;

/**
 * renameat2(RENAME_EXCHANGE) of two names in a loop, as a background job of
 * the enclosing session runs it. It pauses between swaps for about as long as
 * a container takes from the checks to the engine's mount, so that the
 * checks often pass on the folder and the mount then meets the link.
 */
const SWAPPER = `import ctypes, random, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)
    time.sleep(random.uniform(0.02, 0.2))
`;

async function modes(folder: string): Promise<string> {
  const [dir, file] = await Promise.all([stat(folder), stat(join(folder, 'marker'))]);
  return `${dir.mode.toString(8)} ${file.mode.toString(8)}`;
}

test('a folder swapped in while the sandbox starts is never mounted, and never gets ACLs', async (t) => {
  // A backstop, past ava's 120 s without a result: this took 1m42s under gVisor in CI run 27.
  t.timeout(420_000);
  const outer = await makeWorkspace(t, 'toolcell-sec-outer-');
  const elsewhere = await makeWorkspace(t, 'toolcell-sec-elsewhere-');
  await writeFile(join(elsewhere, 'marker'), 'HOST FOLDER\n', { mode: 0o644 });
  // As if an earlier run had prepared it: nothing stops the engine from mounting it.
  await mkdir(join(elsewhere, '.toolcell', 'background'), { recursive: true });
  const sub = join(outer, 'sub');
  await mkdir(sub);
  await giveWorkspaceToSandboxUser(sub);
  await writeFile(join(sub, 'marker'), 'checked\n', { mode: 0o644 });
  await symlink(elsewhere, join(outer, 'link'));
  await writeFile(join(outer, 'swap.py'), SWAPPER);
  let untouched = await modes(elsewhere);

  await using enclosing = await createTestBackend({ warmPool: 0 });
  const swapper = await enclosing.openSession({ sessionId: 'enclosing', workspaceRoot: outer });
  await swapper.spawn({ command: 'python3 swap.py sub link', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pipes', background: true });

  const wrong: string[] = [];
  const refusals: string[] = [];
  const outcomes = { checkedSub: 0, resolvedThroughLink: 0, refused: 0 };
  for (let run = 0; run < RUNS; run++) {
    await using backend = await createTestBackend({ warmPool: 0, removeLeftovers: false });
    let session;
    try {
      session = await backend.openSession({ sessionId: `inner-${run}`, workspaceRoot: sub });
    } catch (error) {
      outcomes.refused++;
      refusals.push((error as Error).message);
      continue;
    }
    const containerId = (session as unknown as { containerId: string }).containerId;
    const labels = ((await dockerInspect(containerId))['Config'] as { Labels: Record<string, string> }).Labels;
    const checked = labels[LABELS.workspace];
    const seen = (await runCommand(session, 'cat /workspace/marker', { mode: 'pipes' })).stdout.trim();
    const mounted = seen === 'checked' ? sub : seen === 'HOST FOLDER' ? elsewhere : `?${seen}`;
    if (mounted !== checked) wrong.push(`run ${run}: checked ${checked}, mounted ${mounted}`);
    if (checked === sub) {
      outcomes.checkedSub++;
      const now = await modes(elsewhere);
      if (now !== untouched) wrong.push(`run ${run}: the host folder changed (${untouched} -> ${now}) though ${sub} was checked`);
    } else {
      // The path itself resolved through the link at that instant: that folder is then the workspace, consistently.
      outcomes.resolvedThroughLink++;
      untouched = await modes(elsewhere);
    }
    await session.close();
  }
  t.log(`${RUNS} runs: ${JSON.stringify(outcomes)}`);
  t.deepEqual(wrong, [], 'a container mounted a folder other than the one checked');
  t.true(outcomes.checkedSub > 0, 'some runs checked sub (the race was exercised)');
  const unclear = refusals.filter((message) => !/Refusing to start the sandbox|is not a directory/.test(message));
  t.deepEqual(unclear, [], 'a refusal says why');
});
