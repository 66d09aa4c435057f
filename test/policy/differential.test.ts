import anyTest from 'ava';
import { chown } from 'node:fs/promises';
import { TRACE_OWNER, runDifferential } from '../helpers/bash-differential.js';
import { makeWorkspace, requireDocker, useSandboxBackend } from '../helpers/docker.js';
import { BashCorpus } from '../fixtures/policy/bash-corpus.js';

const test = await requireDocker(anyTest, 'policy/differential');
// Two CPUs: the three lanes of bash-differential's driver are bound by forks.
const sandbox = useSandboxBackend(test, { warmPool: 0, limits: { cpus: 2 } });

/** Thousands of generated lines, batched in one container, three at a time (about a minute on a quiet 2-core machine). */
const COUNT = 2_000;

test(`the splitter accounts for every command bash runs, over ${COUNT} generated command lines`, async (t) => {
  t.timeout(600_000);
  const workspaceRoot = await makeWorkspace(t, 'toolcell-diff-');
  // As root, the workspace goes to an ordinary user: bash as root ignores the trace's PS4.
  if (process.getuid?.() === 0) await chown(workspaceRoot, TRACE_OWNER.uid, TRACE_OWNER.gid);
  const session = await sandbox.session(t, { workspaceRoot, label: 'diff' });
  const commands = new BashCorpus(22).commands(COUNT);
  const result = await runDifferential(session, workspaceRoot, commands);
  t.log(`generated ${result.generated}, agreed ${result.agreed}, cannot be judged ${result.unjudgeable}, disagreed ${result.disagreements.length}`);
  for (const disagreement of result.disagreements.slice(0, 10)) t.log(JSON.stringify(disagreement));
  t.deepEqual(result.disagreements, []);
  // The test would pass by calling everything "cannot be judged": most lines must be judged.
  t.true(result.agreed > result.generated / 3, `only ${result.agreed} of ${result.generated} judged`);
});
