/**
 * Containers carry labels; leftovers of dead toolcell processes are removed
 * at start-up, and a backend removes all of its own when it closes.
 */
import anyTest from 'ava';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { removeLeftoverContainers } from '../../../src/backends/docker/cleanup.js';
import type { DockerSession } from '../../../src/backends/docker/docker-session.js';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import { sandboxImageTag } from '../../../src/backends/docker/image.js';
import { LABELS, ownerLabels } from '../../../src/backends/docker/labels.js';
import { containersWithLabel, eventually, makeWorkspace, requireDocker, sessionId, createTestBackend } from '../../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/cleanup');

/** The pid of a process that has exited (so no live process owns it). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  const pid = child.pid!;
  await new Promise((resolve) => child.on('exit', resolve));
  return pid;
}

/** A stopped container labelled as a toolcell sandbox owned by `labels`. */
async function fakeSandboxContainer(labels: Record<string, string>): Promise<string> {
  const container = await createEngineClient().createContainer({
    Image: sandboxImageTag(),
    Cmd: ['true'],
    Labels: labels,
    HostConfig: { NetworkMode: 'none' },
  });
  return container.id;
}

async function exists(id: string): Promise<boolean> {
  try {
    await createEngineClient().getContainer(id).inspect();
    return true;
  } catch {
    return false;
  }
}

test.serial("start-up removes containers whose owner process is dead, and keeps live owners' ones", async (t) => {
  const marker = sessionId('leftover');
  const dead = await fakeSandboxContainer({
    [LABELS.sandbox]: '1',
    [LABELS.ownerPid]: String(await deadPid()),
    [LABELS.ownerStart]: '1',
    [LABELS.ownerHost]: hostname(),
    [LABELS.session]: marker,
  });
  const reusedPid = await fakeSandboxContainer({ ...ownerLabels({ [LABELS.session]: marker }), [LABELS.ownerStart]: 'not-my-start-time' });
  const live = await fakeSandboxContainer(ownerLabels({ [LABELS.session]: marker }));
  const otherHost = await fakeSandboxContainer({ ...ownerLabels({ [LABELS.session]: marker }), [LABELS.ownerHost]: 'another-machine', [LABELS.ownerPid]: '1' });
  t.teardown(async () => {
    for (const id of await containersWithLabel(LABELS.session, marker)) await createEngineClient().getContainer(id).remove({ force: true });
  });
  const backend = await createTestBackend({ warmPool: 0 });
  await backend.close();
  t.false(await exists(dead), "a dead owner's container is removed");
  t.false(await exists(reusedPid), 'a container whose owner pid was reused is removed');
  t.true(await exists(live), "a live owner's container is kept");
  t.true(await exists(otherHost), 'a container from another host is kept');
  const all = await removeLeftoverContainers(createEngineClient(), { all: true, labels: { [LABELS.session]: marker } });
  t.deepEqual(all.removed.sort(), [live, otherHost].map((id) => id.slice(0, 12)).sort(), "`clean --all` removes live owners' containers too");
});

test.serial('close() removes every container of the backend, spares included', async (t) => {
  const workspaceRoot = await makeWorkspace(t);
  const backend = await createTestBackend({ warmPool: 2, prewarmWorkspace: workspaceRoot });
  const session = await backend.openSession({ sessionId: sessionId('close'), workspaceRoot });
  await session.spawn({ command: 'sleep 100', cwd: '.', env: {}, mode: 'pty' });
  const ours = await containersWithLabel(LABELS.backend, backend.backendId);
  // The session's own container: a spare may be retired and replaced between the listing and an inspect.
  const own = ours.find((id) => id.startsWith((session as DockerSession).containerId));
  t.truthy(own, 'the session runs in one of the backend’s containers');
  const labels = (await createEngineClient().getContainer(own!).inspect()).Config.Labels;
  t.is(labels[LABELS.sandbox], '1');
  t.is(labels[LABELS.ownerPid], String(process.pid));
  t.is(labels[LABELS.workspace], workspaceRoot);
  await backend.close();
  t.deepEqual(await containersWithLabel(LABELS.backend, backend.backendId), []);
  await t.throwsAsync(backend.openSession({ sessionId: 'after-close', workspaceRoot }), { code: 'sandbox_unavailable' });
});

test.serial('spares are kept for the 4 most recently used workspaces only', async (t) => {
  const backend = await createTestBackend({ warmPool: 1 });
  t.teardown(() => backend.close());
  const workspaces = await Promise.all([1, 2, 3, 4, 5, 6].map(() => makeWorkspace(t)));
  for (const workspace of workspaces) backend.prewarm(workspace);
  const settled = await eventually(
    async () => {
      const ids = await containersWithLabel(LABELS.backend, backend.backendId);
      const inspected = await Promise.all(
        ids.map((id) =>
          createEngineClient()
            .getContainer(id)
            .inspect()
            .catch(() => undefined),
        ),
      );
      const roots = inspected.filter((info) => info?.State.Running).map((info) => info!.Config.Labels[LABELS.workspace]);
      return roots.length === 4 && workspaces.slice(2).every((workspace) => roots.includes(workspace));
    },
    30_000,
    200,
  );
  t.true(settled, 'exactly the last four workspaces keep a running spare');
});
