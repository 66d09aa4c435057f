import anyTest from 'ava';
import { statSync } from 'node:fs';
import { ShellService } from '../../src/shell/shell-service.js';
import { requireDocker } from '../helpers/docker.js';
import { discoverInSession } from './discovery-scripts.js';

/**
 * Discovered tools in the real Docker sandbox: discovery and calls run in
 * the session's container (workspace mounted at /workspace, commands run as
 * its owner), and a call that hangs leaves no process behind when its time
 * runs out.
 */
const test = await requireDocker(anyTest, 'discovery in the docker sandbox');

let service: ShellService;
test.before(async () => {
  service = await ShellService.create();
});
test.after.always(async () => {
  await service?.close();
});

function setup(t: { teardown: (fn: () => Promise<void>) => void }, options: { callTimeoutMs?: number } = {}) {
  return discoverInSession(t, { service, sandbox: 'docker', ...options });
}

test('discovery and calls run inside the container', async (t) => {
  const { session, tool, runner, workspace } = await setup(t);
  t.is(session.backend, 'docker');
  t.regex(session.describe(), /^docker/);
  const greet = await tool('discovered_tool_greet').execute({ who: 'container' }, new AbortController().signal);
  t.is(greet.llmContent, 'hello {"who":"container"}');
  const where = await runner.run({ command: 'pwd; id -u', timeoutMs: 30_000, maxOutputBytes: 1000 });
  const [pwd, uid] = where.stdout.trim().split('\n');
  t.is(pwd, '/workspace');
  // Commands run as the workspace's owner, whoever that is (root included).
  t.is(uid, String(statSync(workspace).uid));
  t.like(await tool('discovered_tool_greet').shouldConfirmExecute({ who: 'x' }, new AbortController().signal), { type: 'exec', sandbox: session.describe() });
});

test('a call that hangs is ended at its timeout, down to its last process', async (t) => {
  const { tool, runner } = await setup(t, { callTimeoutMs: 1000 });
  const result = await tool('discovered_tool_hang').execute({}, new AbortController().signal);
  t.is(result.error?.type, 'execution_timeout');
  const ps = await runner.run({ command: 'ps -eo args', timeoutMs: 30_000, maxOutputBytes: 100_000 });
  t.false(ps.stdout.includes('sleep 1000'), ps.stdout);
});
