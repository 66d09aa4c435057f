import test from 'ava';
import type { ConfirmationRequest } from '../../src/scheduler/confirmation-flow.js';
import type { ToolConfirmationOutcome } from '../../src/tools/tool.js';
import { call, testScheduler } from '../helpers/scheduler.js';

const never = new AbortController().signal;

function answering(...outcomes: ToolConfirmationOutcome[]) {
  const asked: ConfirmationRequest[] = [];
  const confirm = async (request: ConfirmationRequest) => {
    asked.push(request);
    return { outcome: outcomes.shift() ?? 'cancel' };
  };
  return { asked, confirm };
}

test('headless (no confirm handler): a call that would ask is denied, never run', async (t) => {
  const { scheduler, files } = testScheduler(t);
  const [done] = await scheduler.schedule([call('fake_edit', { file: 'f', content: 'x' })], never);
  t.is(done?.response.error?.type, 'confirmation_required');
  t.false(files.has('f'));
});

test('yolo runs everything without asking', async (t) => {
  const { asked, confirm } = answering();
  const { scheduler, files } = testScheduler(t, { approvalMode: 'yolo', confirm });
  const results = await scheduler.schedule([call('fake_edit', { file: 'f', content: 'x' }), call('fake_exec', { command: 'rm -rf /' })], never);
  t.true(results.every((r) => r.status === 'success'));
  t.is(asked.length, 0);
  t.is(files.get('f'), 'x');
});

test('autoEdit approves edits but still asks about commands', async (t) => {
  const { asked, confirm } = answering('proceed_once');
  const { scheduler } = testScheduler(t, { approvalMode: 'autoEdit', confirm });
  const results = await scheduler.schedule([call('fake_edit', { file: 'f', content: 'x' }), call('fake_exec', { command: 'ls' })], never);
  t.deepEqual(
    results.map((r) => r.status),
    ['success', 'success'],
  );
  t.deepEqual(
    asked.map((a) => a.details.type),
    ['exec'],
  );
});

test('plan mode runs read-only tools and refuses the rest with policy_violation', async (t) => {
  const { scheduler, files } = testScheduler(t, { approvalMode: 'plan', confirm: async () => ({ outcome: 'proceed_once' }) });
  const results = await scheduler.schedule(
    [call('wait', { label: 'r', turns: 1 }), call('fake_edit', { file: 'f', content: 'x' }), call('fake_exec', { command: 'ls' })],
    never,
  );
  t.deepEqual(
    results.map((r) => r.response.error?.type),
    [undefined, 'policy_violation', 'policy_violation'],
  );
  t.false(files.has('f'));
});

test('proceed_once runs the call and asks again next time', async (t) => {
  const { asked, confirm } = answering('proceed_once', 'proceed_once');
  const { scheduler } = testScheduler(t, { confirm });
  await scheduler.schedule([call('fake_exec', { command: 'ls' })], never);
  const [second] = await scheduler.schedule([call('fake_exec', { command: 'ls' })], never);
  t.is(second?.status, 'success');
  t.is(asked.length, 2);
  t.is(second?.decision, 'accept');
});

test('proceed_always is remembered for the session, narrowed to the tool and root command', async (t) => {
  const { asked, confirm } = answering('proceed_always', 'proceed_once');
  const { scheduler } = testScheduler(t, { confirm });
  await scheduler.schedule([call('fake_exec', { command: 'ls -l' })], never);
  const [again] = await scheduler.schedule([call('fake_exec', { command: 'ls -a' })], never);
  const [other] = await scheduler.schedule([call('fake_exec', { command: 'rm x' })], never);
  t.is(again?.status, 'success');
  t.is(other?.status, 'success');
  t.deepEqual(
    asked.map((a) => (a.details.type === 'exec' ? a.details.command : '')),
    ['ls -l', 'rm x'],
  );
});

test('cancel cancels this call and the rest of the batch', async (t) => {
  const { asked, confirm } = answering('cancel');
  const { scheduler, files } = testScheduler(t, { confirm });
  const results = await scheduler.schedule(
    [call('fake_edit', { file: 'a', content: '1' }), call('fake_exec', { command: 'ls' }), call('wait', { label: 'w' })],
    never,
  );
  t.deepEqual(
    results.map((r) => r.status),
    ['cancelled', 'cancelled', 'cancelled'],
  );
  t.is(asked.length, 1);
  t.is(files.size, 0);
  t.is(results[0]?.decision, 'reject');
});

test('modify_with_editor replaces the proposal with the user edit, then asks again', async (t) => {
  const { asked, confirm } = answering('modify_with_editor', 'proceed_once');
  const editor = async ({ proposedContent }: { proposedContent: string }) => `${proposedContent} (edited)`;
  const { scheduler, files } = testScheduler(t, { confirm, editor });
  const [done] = await scheduler.schedule([call('fake_edit', { file: 'f', content: 'draft' })], never);
  t.is(done?.status, 'success');
  t.is(files.get('f'), 'draft (edited)');
  t.is(asked.length, 2);
  t.is(asked[1]!.details.type === 'edit' && asked[1]!.details.newContent, 'draft (edited)');
  t.is(done?.decision, 'modify');
  t.deepEqual(done?.request.args, { file: 'f', content: 'draft (edited)', turns: 3 });
  const output = (done!.response.responseParts[0] as { functionResponse: { response: { output: string } } }).functionResponse.response.output;
  t.regex(output, /^wrote f\n\nNote: the user edited your proposed change/);
});

test('an editor that gives up leaves the proposal unchanged and asks again', async (t) => {
  const { asked, confirm } = answering('modify_with_editor', 'proceed_once');
  const { scheduler, files } = testScheduler(t, { confirm, editor: async () => null });
  await scheduler.schedule([call('fake_edit', { file: 'f', content: 'draft' })], never);
  t.is(files.get('f'), 'draft');
  t.is(asked.length, 2);
});

test('aborting while a confirmation is pending cancels the batch', async (t) => {
  const controller = new AbortController();
  const { scheduler, files } = testScheduler(t, {
    confirm: () => {
      controller.abort();
      return new Promise(() => {});
    },
  });
  const results = await scheduler.schedule([call('fake_edit', { file: 'f', content: 'x' }), call('wait', { label: 'w' })], controller.signal);
  t.deepEqual(
    results.map((r) => r.status),
    ['cancelled', 'cancelled'],
  );
  t.false(files.has('f'));
});

test('aborting during execution cancels running calls and keeps their partial output', async (t) => {
  const controller = new AbortController();
  const { scheduler } = testScheduler(t, { onOutput: (_id, output) => output === 'w 2' && controller.abort() });
  const [done] = await scheduler.schedule([call('wait', { label: 'w', turns: 1000 })], controller.signal);
  t.is(done?.status, 'cancelled');
  const part = done!.response.responseParts[0] as { functionResponse: { response: Record<string, unknown> } };
  t.regex(String(part.functionResponse.response['error']), /Cancelled/);
  t.is(part.functionResponse.response['output'], 'w partial');
});
