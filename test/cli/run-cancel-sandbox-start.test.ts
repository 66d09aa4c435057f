/**
 * Ctrl+C while the sandbox container is still starting: the call ends at
 * once, the start is cancelled (no adoption, no spare started after it), the
 * half-started container is removed, and `toolcell run` exits 130 with
 * nothing of the run left in Docker. The container's start request is held
 * back by a proxy in front of the engine, so the interrupt lands inside the
 * start every time.
 */
import anyTest from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createEngineClient } from '../../src/backends/docker/engine.js';
import { LABELS } from '../../src/backends/docker/labels.js';
import { runCli } from '../helpers/cli.js';
import { makeWorkspace, requireDocker } from '../helpers/docker.js';
import { startDockerProxy } from '../helpers/docker-proxy.js';
import { callTurn, startFakeGemini, textTurn } from '../helpers/fake-gemini.js';

const test = await requireDocker(anyTest, 'cli/run-cancel-sandbox-start');

async function containersOwnedBy(pid: number): Promise<string[]> {
  const list = await createEngineClient().listContainers({ all: true, filters: { label: [`${LABELS.ownerPid}=${pid}`] } });
  return list.map((info) => `${info.Names[0] ?? info.Id} (${info.State})`);
}

test('Ctrl+C during the sandbox start cancels the start: exit 130, the call cancelled, no container left', async (t) => {
  const workspace = await makeWorkspace(t);
  const proxy = await startDockerProxy({ hold: /^POST \S*\/containers\/[0-9a-f]+\/start\b/ });
  t.teardown(() => proxy.close());
  const fake = await startFakeGemini(callTurn([{ name: 'run_shell_command', args: { command: 'touch ran.txt' }, id: 'sh' }]), textTurn('done'));
  t.teardown(() => fake.close());

  let pid = 0;
  let reportCancelled: () => void = () => {};
  const cancelledLine = new Promise<true>((resolve) => (reportCancelled = () => resolve(true)));
  const run = runCli(['run', '-w', workspace, '--sandbox', 'docker', '--approval', 'yolo', 'touch it'], {
    env: { GEMINI_API_KEY: 'k', GOOGLE_GEMINI_BASE_URL: fake.url, DOCKER_HOST: `unix://${proxy.socketPath}` },
    onSpawn: (childPid) => (pid = childPid),
    onStderr: (stderr) => {
      if (/run_shell_command .*cancelled/.test(stderr)) reportCancelled();
    },
  });
  t.teardown(async () => {
    for (const id of (await createEngineClient().listContainers({ all: true, filters: { label: [`${LABELS.ownerPid}=${pid}`] } })).map((c) => c.Id)) {
      await createEngineClient()
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
    }
  });

  // The container exists and its start is in flight (held): interrupt now.
  await proxy.held;
  process.kill(pid, 'SIGINT');
  // The call must end while the start is still held; the limit only keeps a failing run from hanging.
  const endedWhileStarting = await Promise.race([cancelledLine, delay(30_000).then(() => false as const)]);
  proxy.release();
  const result = await run;

  t.true(endedWhileStarting, 'the call was reported cancelled while its container was still starting');
  t.is(result.code, 130, result.stderr);
  t.deepEqual(await containersOwnedBy(pid), [], 'nothing of the run is left in Docker');
  const creates = proxy.requests.filter((line) => /\/containers\/create\b/.test(line));
  t.is(creates.length, 1, `no spare was started after the interrupt: ${JSON.stringify(proxy.requests)}`);
  t.false(
    proxy.requests.some((line) => /\/rename\b/.test(line)),
    'the cancelled container was never adopted by the session',
  );
  t.false(existsSync(join(workspace, 'ran.txt')), 'the command never ran');
});
