import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const script = fileURLToPath(new URL('../fixtures/worker-pool/open-and-close-pools.js', import.meta.url));

/*
 * Node aborts the whole process (FATAL ERROR: v8::Module::IsGraphAsync) when
 * a thread is terminated while require() instantiates an ES module, and
 * Piscina loads its file with require(): a pool closed while its threads
 * started (a short `toolcell run`) crashed CI's run this way. The window is
 * too narrow to hit on demand, so the test asks Node to report every ES
 * module loaded by require() and expects none, and closes pools at delays
 * spread over their start as well.
 */
test('pools closed while their threads start end cleanly, and no thread loads an ES module with require()', async (t) => {
  const workspace = mkdtempSync(join(tmpdir(), 'toolcell-thread-start-'));
  writeFileSync(join(workspace, 'seen.txt'), 'x');
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--trace-require-module=all', script, '20'], { cwd: workspace, timeout: 60_000 });
  // The call after the rounds listed the workspace: seen.txt, the file written above.
  t.regex(stdout, /^rounds 20; Directory listing for .*seen\.txt\n$/);
  t.notRegex(stderr, /loading ES Module .* using require\(\)/);
});
