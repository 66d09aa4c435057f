import test from 'ava';
import { DEFAULT_LIMITS, resolveDockerBackendOptions } from '../../../src/backends/docker/options.js';
import type { DockerBackendOptions } from '../../../src/backends/docker/options.js';

test('defaults turn every protection on', (t) => {
  const resolved = resolveDockerBackendOptions(undefined);
  t.deepEqual(resolved.limits, { ...DEFAULT_LIMITS });
  t.deepEqual(resolved.hardening, { network: 'none', readOnlyRoot: true, noNewPrivileges: true, hideStateDir: true, securityOpt: [] });
  t.is(resolved.user, 'auto');
  t.is(resolved.warmPool, 1);
  t.false(resolved.buildIfMissing);
});

test('limits are merged over the defaults', (t) => {
  const resolved = resolveDockerBackendOptions({ limits: { memory: 512 * 1024 * 1024, pids: 64 }, runtime: 'runsc' });
  t.is(resolved.limits.memory, 512 * 1024 * 1024);
  t.is(resolved.limits.pids, 64);
  t.is(resolved.limits.cpus, DEFAULT_LIMITS.cpus);
  t.is(resolved.runtime, 'runsc');
});

const bad: Array<[string, unknown, RegExp, typeof TypeError | typeof RangeError]> = [
  ['not an object', 42, /^createDockerBackend: options must be an object/, TypeError],
  ['unknown option', { memory: 1 }, /options\.memory is not a known option/, TypeError],
  ['unknown limit', { limits: { swap: 1 } }, /options\.limits\.swap is not a known option/, TypeError],
  ['memory as a string', { limits: { memory: '1g' } }, /options\.limits\.memory must be a number/, TypeError],
  ['memory too small', { limits: { memory: 1024 } }, /options\.limits\.memory must be at least 16777216/, RangeError],
  ['fractional pids', { limits: { pids: 10.5 } }, /options\.limits\.pids must be an integer/, TypeError],
  ['zero cpus', { limits: { cpus: 0 } }, /options\.limits\.cpus must be at least 0\.01/, RangeError],
  ['root user', { user: { uid: 0, gid: 0 } }, /options\.user\.uid must be at least 1/, RangeError],
  ['user as a name', { user: 'nobody' }, /options\.user must be 'auto' or \{uid, gid\}/, TypeError],
  ['runtime with spaces', { runtime: 'run sc' }, /options\.runtime/, TypeError],
  ['warm pool too big', { warmPool: 100 }, /options\.warmPool must be at most 8/, RangeError],
  ['relative prewarm path', { prewarmWorkspace: 'ws' }, /options\.prewarmWorkspace must be an absolute path/, TypeError],
  ['no-new-privileges smuggled as securityOpt', { hardening: { securityOpt: ['no-new-privileges:false'] } }, /noNewPrivileges/, TypeError],
  ['user missing its gid', { user: { uid: 1000 } }, /options\.user\.gid must be a number/, TypeError],
  ['user with a stray key', { user: { uid: 1000, gid: 1000, root: true } }, /options\.user\.root is not a known option/, TypeError],
  ['an empty securityOpt entry', { hardening: { securityOpt: [''] } }, /options\.hardening\.securityOpt\.0 must not be empty/, TypeError],
  ['null options', null, /options must be an object/, TypeError],
  ['readOnlyRoot as a string', { hardening: { readOnlyRoot: 'no' } }, /options\.hardening\.readOnlyRoot must be a boolean/, TypeError],
];

for (const [label, options, message, type] of bad) {
  test(`rejects ${label}, naming the option`, (t) => {
    t.throws(() => resolveDockerBackendOptions(options as DockerBackendOptions), { instanceOf: type, message });
  });
}
