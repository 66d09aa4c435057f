/** openSession's `limits` are checked like every option: the error names the field. No Docker needed. */
import test from 'ava';
import { useTempWorkspace } from '../helpers/workspace.js';
import { useShellService } from './support.js';

test('malformed session limits are refused naming the field', async (t) => {
  const service = await useShellService(t);
  const workspaceRoot = useTempWorkspace(t).root;
  const open = (limits: unknown) => service.openSession({ sandbox: 'docker', workspaceRoot, limits } as Parameters<typeof service.openSession>[0]);
  await t.throwsAsync(open({ memory: 1024 }), { instanceOf: RangeError, message: /options\.limits\.memory must be at least 16777216/ });
  await t.throwsAsync(open({ cpus: 0 }), { instanceOf: RangeError, message: /options\.limits\.cpus must be at least 0\.01/ });
  await t.throwsAsync(open({ pids: 10.5 }), { instanceOf: TypeError, message: /options\.limits\.pids must be an integer/ });
  await t.throwsAsync(open({ memory: '512m' }), { instanceOf: TypeError, message: /options\.limits\.memory must be a number/ });
  await t.throwsAsync(open({ memoryBytes: 64 * 1024 ** 2 }), { instanceOf: TypeError, message: /options\.limits\.memoryBytes is not a known option/ });
  await t.throwsAsync(open('big'), { instanceOf: TypeError, message: /options\.limits must be/ });
});

test('limits on the host (no container to hold them) are refused, not ignored', async (t) => {
  const service = await useShellService(t);
  const workspaceRoot = useTempWorkspace(t).root;
  await t.throwsAsync(service.openSession({ sandbox: 'none', workspaceRoot, limits: { pids: 64 } }), {
    instanceOf: TypeError,
    message: /options\.limits must not be set with sandbox 'none'/,
  });
});
