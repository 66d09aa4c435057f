import test from 'ava';
import { checkRules } from '../../src/policy/load-policy-file.js';
import { PolicyEngine } from '../../src/policy/policy-engine.js';
import type { PolicyRuleInput } from '../../src/policy/policy-rule.js';
import type { ConfirmationRequest } from '../../src/scheduler/confirmation-flow.js';
import { call, registerRecordingShell, testScheduler } from '../helpers/scheduler.js';

const never = new AbortController().signal;

async function policyOf(...rules: PolicyRuleInput[]): Promise<PolicyEngine> {
  return PolicyEngine.create(checkRules(rules, 'test.toml'));
}

function setUp(t: Parameters<typeof testScheduler>[0], options: Parameters<typeof testScheduler>[1]) {
  const setup = testScheduler(t, options);
  const ran = registerRecordingShell(setup.registry, setup.workspace);
  return { ...setup, ran };
}

test('a deny rule holds in yolo, and the denial names the rule so the model can try something else', async (t) => {
  const policy = await policyOf({ name: 'no-rm', commandPrefix: 'rm', decision: 'deny', denyMessage: 'Use the trash folder.' });
  const { scheduler, ran } = setUp(t, { approvalMode: 'yolo', policy });
  const [done] = await scheduler.schedule([call('run_shell_command', { command: 'ls && rm -rf /' })], never);
  t.is(done?.response.error?.type, 'policy_denied');
  t.regex(done!.response.error!.message, /test\.toml rule 1 \("no-rm"\)/);
  t.regex(done!.response.error!.message, /`rm -rf \/`/);
  t.regex(done!.response.error!.message, /Use the trash folder\./);
  t.is(done?.decision, 'denied');
  t.deepEqual(ran, []);
});

test('a deny rule on a tool name holds in yolo for tools other than the shell', async (t) => {
  const policy = await policyOf({ toolName: 'fake_*', decision: 'deny' });
  const { scheduler, files } = setUp(t, { approvalMode: 'yolo', policy });
  const [done] = await scheduler.schedule([call('fake_edit', { file: 'f', content: 'x' })], never);
  t.is(done?.response.error?.type, 'policy_denied');
  t.false(files.has('f'));
});

test('an allow rule runs a call without confirmation where nobody can be asked (headless)', async (t) => {
  const policy = await policyOf({ toolName: 'run_shell_command', commandPrefix: 'git status', decision: 'allow' });
  const { scheduler, ran } = setUp(t, { policy });
  const [done] = await scheduler.schedule([call('run_shell_command', { command: 'git status --short' })], never);
  t.is(done?.status, 'success');
  t.is(done?.decision, 'auto');
  t.deepEqual(ran, ['git status --short']);
});

test('headless, a command only partly allowed is refused as before (confirmation_required)', async (t) => {
  const policy = await policyOf({ commandPrefix: 'git status', decision: 'allow' });
  const { scheduler, ran } = setUp(t, { policy });
  const [done] = await scheduler.schedule([call('run_shell_command', { command: 'git status; make' })], never);
  t.is(done?.response.error?.type, 'confirmation_required');
  t.deepEqual(ran, []);
});

test('headless, ask_user is refused with confirmation_required naming the rule', async (t) => {
  const policy = await policyOf({ name: 'ask-curl', commandPrefix: 'curl', decision: 'ask_user' });
  const { scheduler, ran } = setUp(t, { approvalMode: 'yolo', policy });
  const [done] = await scheduler.schedule([call('run_shell_command', { command: 'curl example.com' })], never);
  t.is(done?.response.error?.type, 'confirmation_required');
  t.regex(done!.response.error!.message, /rule test\.toml rule 1 \("ask-curl"\)/);
  t.deepEqual(ran, []);
});

test('headless, a command that cannot be parsed with confidence is refused even in yolo', async (t) => {
  const policy = await policyOf({ commandPrefix: 'ls', decision: 'allow' });
  const { scheduler, ran } = setUp(t, { approvalMode: 'yolo', policy });
  const [done] = await scheduler.schedule([call('run_shell_command', { command: 'eval "$X"' })], never);
  t.is(done?.response.error?.type, 'confirmation_required');
  t.regex(done!.response.error!.message, /eval runs a string that is known only when the command runs/);
  t.deepEqual(ran, []);
});

test('ask_user asks even in yolo, and for a tool that never asks by itself', async (t) => {
  const asked: ConfirmationRequest[] = [];
  const confirm = async (request: ConfirmationRequest) => {
    asked.push(request);
    return { outcome: 'proceed_once' as const };
  };
  const policy = await policyOf({ toolName: ['run_shell_command', 'wait'], decision: 'ask_user' });
  const { scheduler, ran } = setUp(t, { approvalMode: 'yolo', policy, confirm });
  const results = await scheduler.schedule([call('run_shell_command', { command: 'ls' }), call('wait', { label: 'w', turns: 1 })], never);
  t.deepEqual(
    results.map((r) => r.status),
    ['success', 'success'],
  );
  t.deepEqual(
    asked.map((a) => a.details.type),
    ['exec', 'info'],
  );
  t.deepEqual(ran, ['ls']);
});

test('plan mode stays read-only unless an allow rule lists plan in its modes', async (t) => {
  const everywhere = await policyOf({ commandPrefix: 'ls', decision: 'allow' });
  const refused = setUp(t, { approvalMode: 'plan', policy: everywhere });
  const [first] = await refused.scheduler.schedule([call('run_shell_command', { command: 'ls' })], never);
  t.is(first?.response.error?.type, 'policy_violation');

  const inPlan = await policyOf({ commandPrefix: 'ls', decision: 'allow', modes: ['plan'] });
  const allowed = setUp(t, { approvalMode: 'plan', policy: inPlan });
  const [second] = await allowed.scheduler.schedule([call('run_shell_command', { command: 'ls' })], never);
  t.is(second?.status, 'success');
  t.deepEqual(allowed.ran, ['ls']);
});

test('a rule limited to other modes does not apply', async (t) => {
  const policy = await policyOf({ commandPrefix: 'rm', decision: 'deny', modes: ['default'] });
  const { scheduler, ran } = setUp(t, { approvalMode: 'yolo', policy });
  const [done] = await scheduler.schedule([call('run_shell_command', { command: 'rm x' })], never);
  t.is(done?.status, 'success');
  t.deepEqual(ran, ['rm x']);
});

test('without rules the approval modes behave as before', async (t) => {
  const policy = await policyOf();
  const { scheduler, ran } = setUp(t, { policy });
  const [done] = await scheduler.schedule([call('run_shell_command', { command: 'eval ls' })], never);
  t.is(done?.response.error?.type, 'confirmation_required');
  const yolo = setUp(t, { approvalMode: 'yolo', policy });
  const [ranInYolo] = await yolo.scheduler.schedule([call('run_shell_command', { command: 'eval ls' })], never);
  t.is(ranInYolo?.status, 'success');
  t.deepEqual(ran, []);
});
