/**
 * The attack before the boundary: every escape of
 * test/fixtures/policy/escapes.ts, run with no policy in a real sandbox,
 * deletes victim.txt. So the tests that refuse them (scheduler and hosting
 * policy-escapes) refuse commands that would do harm, not commands that
 * happen to fail.
 */
import anyTest from 'ava';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeWorkspace, requireDocker, runCommand, useSandboxBackend } from '../helpers/docker.js';
import { ESCAPES } from '../fixtures/policy/escapes.js';

const test = await requireDocker(anyTest, 'policy/escapes-run');
const sandbox = useSandboxBackend(test);

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

test('each escape deletes victim.txt when no policy stands in its way', async (t) => {
  t.timeout(300_000);
  const workspaceRoot = await makeWorkspace(t);
  const session = await sandbox.session(t, { workspaceRoot, label: 'escapes-run' });
  const victim = join(workspaceRoot, 'victim.txt');
  for (const escape of ESCAPES) {
    await writeFile(victim, 'still here');
    const result = await runCommand(session, escape.command);
    t.false(await exists(victim), `${escape.name} left victim.txt (exit ${JSON.stringify(result.status)}): ${result.stdout}${result.stderr}`);
  }
});
