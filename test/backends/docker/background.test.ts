/**
 * Background spawns keep running after the call returns, write to a log the
 * host can read, and die with their session.
 */
import anyTest from 'ava';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import {
  SANDBOX_TEST_ENV,
  commandProcesses,
  eventually,
  makeWorkspace,
  requireDocker,
  runCommand,
  sessionId,
  useSandboxBackend,
} from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/background');
const sandbox = useSandboxBackend(test);

test('a background job survives its call and logs to a host-readable file', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const session = await sandbox.session(t, { workspaceRoot });
  const job = await session.spawn({ command: 'echo started; sleep 2001; echo never', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pty', background: true });
  t.true(job.pid > 1);
  t.truthy(job.logPath);
  // A log folder of the container's own, so other sessions of the workspace never see it.
  t.is(dirname(dirname(job.logPath!)), join(workspaceRoot, '.toolcell', 'background'));
  t.regex(basename(dirname(job.logPath!)), /^[0-9a-f]{12}$/);
  t.true(await eventually(async () => (await readFile(job.logPath!, 'utf8').catch(() => '')) === 'started\n'), 'the log holds the output');
  // Other calls come and go; the job keeps running.
  t.is((await runCommand(session, 'echo other')).status.exitCode, 0);
  const running = await commandProcesses(session.containerId);
  t.true(
    running.some((p) => p.args.includes('sleep 2001')),
    'the job is still running after other calls',
  );
  const visible = await runCommand(session, `kill -0 ${job.pid} && echo visible`);
  t.regex(visible.stdout, /visible/, 'its pid is the one commands see');
});

test('a background job can be killed on its own', async (t) => {
  const session = await sandbox.session(t);
  const job = await session.spawn({ command: 'setsid sleep 2002 & sleep 2003', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pty', background: true });
  await eventually(async () => (await commandProcesses(session.containerId)).length >= 2);
  await job.kill();
  t.is((await job.exited).signal, 'SIGTERM');
  t.deepEqual(await commandProcesses(session.containerId), []);
});

test('closing the session ends its background jobs and removes its container', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const session = await sandbox.backend.openSession({ sessionId: sessionId('bg-close'), workspaceRoot });
  const containerId = (session as unknown as { containerId: string }).containerId;
  const job = await session.spawn({ command: 'sleep 2004', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pty', background: true });
  await session.close();
  const status = await job.exited;
  t.is(status.exitCode, null, 'the job ended with the session');
  const gone = await eventually(async () => {
    try {
      await createEngineClient().getContainer(containerId).inspect();
      return false;
    } catch (error) {
      return (error as { statusCode?: number }).statusCode === 404;
    }
  });
  t.true(gone, 'the container is removed');
});

test('a background job that exits on its own settles exited with its status', async (t) => {
  const session = await sandbox.session(t);
  const job = await session.spawn({ command: 'exit 3', cwd: '.', env: { ...SANDBOX_TEST_ENV }, mode: 'pipes', background: true });
  t.deepEqual(await job.exited, { exitCode: 3, signal: null });
});
