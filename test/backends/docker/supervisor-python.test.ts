/**
 * Runs the in-container supervisor's own tests (test/supervisor/, pytest)
 * as part of `npm test`. They need python3 with pytest (Debian's
 * python3-pytest, which .ci/run installs): missing, the test fails under
 * CI=true and says how to get it elsewhere.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../..', import.meta.url));

/** The first python3 that can import pytest: Debian's, then whatever PATH has. */
function pythonWithPytest(): string | undefined {
  for (const python of ['/usr/bin/python3', 'python3']) {
    const probe = spawnSync(python, ['-c', 'import pytest'], { stdio: 'ignore' });
    if (probe.status === 0) return python;
  }
  return undefined;
}

const python = pythonWithPytest();

if (python === undefined && process.env['CI'] !== 'true') {
  test.skip('supervisor: pytest (needs python3-pytest: apt-get install -y python3-pytest)', () => {});
} else {
  test('supervisor: the Python tests pass (frame reader and writer, golden frames, request checks, quota)', (t) => {
    t.truthy(python, 'python3 with pytest is required under CI (apt-get install -y python3-pytest)');
    const run = spawnSync(python!, ['-m', 'pytest', '-q', 'test/supervisor'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      timeout: 100_000,
    });
    t.is(run.status, 0, `${run.stdout}\n${run.stderr}`);
    t.regex(run.stdout, /\d+ passed/);
  });
}
