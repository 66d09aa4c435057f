import test from 'ava';
import { eventually } from '../helpers/docker.js';
import { abortWhenOutput, processesWith, uniqueSleepToken, useShellSession } from './support.js';

// Each command prints "ready" once its escapee is started; the test aborts on
// that and then looks in /proc for anything still running with the token.
// Live updates are unthrottled so "ready" is seen as soon as it is printed.
const fast = { service: { liveUpdateIntervalMs: 0 } };

const escapes: Array<[string, (token: string) => string]> = [
  ['a plain child of the shell', (token) => `sleep ${token} & echo ready; wait`],
  ['a setsid child (new session and process group)', (token) => `setsid sleep ${token} & echo ready; sleep ${token}`],
  ['a nohup child', (token) => `nohup sleep ${token} >/dev/null 2>&1 & echo ready; sleep ${token}`],
  ['a double fork (orphan reparented to init)', (token) => `( (sleep ${token} &) & ); echo ready; sleep ${token}`],
  ['setsid plus a double fork (outside the session and the tree)', (token) => `setsid sh -c '(sleep ${token} &)' ; echo ready; sleep ${token}`],
  ['a process group of its own (set -m job control)', (token) => `set -m; sleep ${token} & echo ready; wait`],
  ['a tree that ignores SIGTERM', (token) => `trap '' TERM; sleep ${token} & echo ready; sleep ${token}`],
];

for (const [name, command] of escapes) {
  test(`abort kills ${name}`, async (t) => {
    const { session } = await useShellSession(t, fast);
    const token = uniqueSleepToken();
    const { signal, onOutput } = abortWhenOutput(/ready/);
    const result = await session.run({ command: command(token), signal, onOutput });
    t.true(result.aborted);
    t.regex(result.output, /ready/, 'the partial output is kept');
    t.deepEqual(processesWith(token), [], 'no process of the call survives');
  });
}

test('a finished command leaves nothing running behind it', async (t) => {
  const { session } = await useShellSession(t);
  const token = uniqueSleepToken();
  const result = await session.run({ command: `setsid sleep ${token} & nohup sleep ${token} >/dev/null 2>&1 & ( (sleep ${token} &) & ); echo done` });
  t.is(result.exitCode, 0);
  t.false(result.aborted);
  t.regex(result.output, /done/);
  t.deepEqual(processesWith(token), []);
});

test('a background command survives the call and ends with the session', async (t) => {
  const { session } = await useShellSession(t);
  const token = uniqueSleepToken();
  const result = await session.run({ command: `sleep ${token}`, background: true });
  t.is(typeof result.backgroundPid, 'number');
  t.truthy(result.logPath);
  // The call answers once the job is forked; its exec may still be under way.
  t.true(await eventually(async () => processesWith(token).length > 0), 'running after the call returned');
  await session.close();
  t.deepEqual(processesWith(token), [], 'killed when the session closed');
});

test('closing the service kills background jobs of every session', async (t) => {
  const { service, session } = await useShellSession(t);
  const token = uniqueSleepToken();
  await session.run({ command: `setsid sleep ${token} & sleep ${token}`, background: true });
  t.true(await eventually(async () => processesWith(token).length >= 2));
  await service.close();
  t.deepEqual(processesWith(token), []);
});
