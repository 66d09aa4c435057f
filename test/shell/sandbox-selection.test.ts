import test from 'ava';
import { useShellService } from './support.js';
import { useTempWorkspace } from '../helpers/workspace.js';

// A socket path nothing listens on: the engine "does not answer".
const deadDocker = { socketPath: '/nonexistent/toolcell-dead-docker.sock', host: 'unix:///nonexistent/toolcell-dead-docker.sock' };

test('auto with an unreachable Docker engine fails closed: every run is refused, nothing runs on the host', async (t) => {
  const workspace = useTempWorkspace(t);
  const service = await useShellService(t, { docker: deadDocker });
  const session = await service.openSession({ sandbox: 'auto', workspaceRoot: workspace.root });
  t.is(session.backend, 'unavailable');
  t.regex(session.describe(), /^unavailable: /);
  for (const mode of ['pty', 'pipes'] as const) {
    const error = await t.throwsAsync(session.run({ command: 'touch ran-on-host', mode }));
    t.is((error as { code?: string }).code, 'sandbox_unavailable');
    t.regex(error!.message, /toolcell sandbox setup/);
    t.notRegex(error!.message, /\n/, 'the refusal is one line');
    t.regex(error!.message, /--sandbox none/);
  }
  const background = await t.throwsAsync(session.run({ command: 'touch ran-on-host', background: true }));
  t.is((background as { code?: string }).code, 'sandbox_unavailable');
  t.false(workspace.exists('ran-on-host'));
});

test('docker with an unreachable engine fails every run and never falls back to the host', async (t) => {
  const workspace = useTempWorkspace(t);
  const service = await useShellService(t, { docker: deadDocker });
  const session = await service.openSession({ sandbox: 'docker', workspaceRoot: workspace.root });
  t.not(session.backend, 'host');
  const error = await t.throwsAsync(session.run({ command: 'touch ran-on-host' }));
  t.truthy((error as { code?: string }).code);
  t.false(workspace.exists('ran-on-host'));
});

test('none runs on the host, and says so', async (t) => {
  const workspace = useTempWorkspace(t);
  const service = await useShellService(t, { docker: deadDocker });
  const session = await service.openSession({ sandbox: 'none', workspaceRoot: workspace.root });
  t.is(session.backend, 'host');
  t.is(session.describe(), 'host (no sandbox)');
  t.is((await session.run({ command: 'touch ran-on-host' })).exitCode, 0);
  t.true(workspace.exists('ran-on-host'));
});
