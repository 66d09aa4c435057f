/**
 * What a test file does when something it needs is missing (the Docker
 * sandbox, gVisor): under CI=true one test that fails saying what and why, so
 * CI never passes by skipping; elsewhere the reason printed once. Either way
 * the file's own tests and hooks are then skipped.
 */
import type { TestFn } from 'ava';

export function missingRequirement<Context>(test: TestFn<Context>, input: { failingTitle: string; failure: string; reason: string }): TestFn<Context> {
  if (process.env['CI'] === 'true') {
    test(input.failingTitle, (t) => {
      t.fail(input.failure);
    });
  } else {
    console.warn(input.reason);
  }
  return skippingTest(test);
}

/** A `test` whose every test and hook is skipped (hooks do nothing). */
function skippingTest<Context>(test: TestFn<Context>): TestFn<Context> {
  const noop = (): void => {};
  const hook = Object.assign(noop, { always: noop, skip: noop });
  const skip = (...args: unknown[]): void => (test.skip as (...rest: unknown[]) => void)(...args);
  const build = (): Record<string, unknown> =>
    Object.assign<(...args: unknown[]) => void, Record<string, unknown>>((...args: unknown[]) => skip(...args), {
      skip,
      only: skip,
      failing: skip,
      todo: test.todo,
      before: hook,
      after: hook,
      beforeEach: hook,
      afterEach: hook,
      macro: test.macro,
      meta: test.meta,
    });
  const stub = build();
  stub['serial'] = build();
  return stub as unknown as TestFn<Context>;
}
