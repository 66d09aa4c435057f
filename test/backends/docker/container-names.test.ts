/**
 * Every container toolcell starts is named `toolcell-…`, so a person running
 * `docker ps` sees at a glance whose it is: spares (`toolcell-spare-…`),
 * adopted ones (`toolcell-<session>-<id>`) and replacements of a session's
 * dead container (`toolcell-<session>-…`).
 */
import anyTest from 'ava';
import { createEngineClient } from '../../../src/backends/docker/engine.js';
import { LABELS } from '../../../src/backends/docker/labels.js';
import { eventually, makeWorkspace, requireDocker, runCommand, sessionId, createTestBackend } from '../../helpers/docker.js';
import type { DockerSession } from '../../../src/backends/docker/docker-session.js';

const test = await requireDocker(anyTest, 'sandbox/container-names');

/** Name (without Docker's leading slash) and session label of each container of a backend. */
async function containersOf(backendId: string): Promise<Array<{ id: string; name: string; session: string | undefined }>> {
  const list = await createEngineClient().listContainers({ all: true, filters: { label: [`${LABELS.backend}=${backendId}`] } });
  return list.map((info) => ({ id: info.Id, name: (info.Names[0] ?? '').replace(/^\//, ''), session: info.Labels[LABELS.session] }));
}

test.serial('the warm spare, the adopted container and a replacement are all named toolcell-…', async (t) => {
  const backend = await createTestBackend({ warmPool: 1 });
  t.teardown(() => backend.close());
  const workspaceRoot = await makeWorkspace(t);
  const id = sessionId('names');
  const session = (await backend.openSession({ sessionId: id, workspaceRoot })) as DockerSession;
  t.teardown(() => session.close());

  // Adopting a container refills the pool: wait for the spare, and for the adopted one's new name.
  const adoptedName = `toolcell-${id}-${session.containerId}`;
  const settled = await eventually(
    async () => {
      const names = (await containersOf(backend.backendId)).map((container) => container.name);
      return names.length === 2 && names.includes(adoptedName);
    },
    30_000,
    100,
  );
  t.true(settled, 'one adopted container and one spare');
  const containers = await containersOf(backend.backendId);
  const spare = containers.find((container) => container.name !== adoptedName);
  t.regex(spare?.name ?? '', /^toolcell-spare-[0-9a-f]{12}$/);

  // A dead session container is replaced, on the next command, by a new one named for the session.
  const first = session.containerId;
  await createEngineClient().getContainer(first).kill();
  const replaced = await eventually(
    async () => {
      const ran = await runCommand(session, 'true').then(
        (result) => result.status.exitCode === 0,
        () => false,
      );
      return ran && session.containerId !== first;
    },
    30_000,
    100,
  );
  t.true(replaced, 'the session runs in a new container');
  const replacement = (await containersOf(backend.backendId)).find((container) => container.id.startsWith(session.containerId));
  t.regex(replacement?.name ?? '', new RegExp(`^toolcell-${id}-[0-9a-f]{12}$`));

  for (const container of await containersOf(backend.backendId))
    t.regex(container.name, /^toolcell-/, `${container.id.slice(0, 12)} is named ${container.name}`);
});
