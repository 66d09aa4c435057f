/**
 * Loaded into every test file's process (ava's `require`). When a file's
 * tests and teardowns are done, its process should end by itself; one that
 * does not (a server left listening, a child process left running) would
 * keep ava, and so CI, waiting forever: ava has no time limit once a file's
 * tests have ended. So after a grace period for cleanups still settling,
 * the file fails, naming what held it, instead of hanging the run.
 */
import { registerCompletionHandler } from 'ava';

/** How long a file's process may take to end once its tests are done: teardowns already ran. */
const GRACE_MS = 60_000;

registerCompletionHandler(() => {
  const timer = setTimeout(() => {
    process.stderr.write(
      `exit-guard: this test file's process was still running ${GRACE_MS / 1000} s after its tests ended, held by: ${process.getActiveResourcesInfo().join(', ')}; something it started was never stopped\n`,
    );
    process.exit(1);
  }, GRACE_MS);
  // The guard itself must not hold the process.
  timer.unref();
});
