/**
 * Issue 22 §1's escapes (test/fixtures/policy/escapes.ts) through the
 * scheduler, under an allow-list policy and a deny-only one, in every
 * approval mode: none runs. A command whose `rm` the engine sees is refused
 * by the deny rule (policy_denied); one it cannot see into is refused where
 * nobody can be asked (confirmation_required) and asked, never run on its
 * own, where someone can, yolo included.
 */
import test from 'ava';
import { APPROVAL_MODES } from '../../src/contracts/approval-mode.js';
import { checkRules } from '../../src/policy/load-policy-file.js';
import { PolicyEngine } from '../../src/policy/policy-engine.js';
import type { PolicyRuleInput } from '../../src/policy/policy-rule.js';
import type { ConfirmationRequest } from '../../src/scheduler/confirmation-flow.js';
import { ESCAPES } from '../fixtures/policy/escapes.js';
import { call, registerRecordingShell, testScheduler } from '../helpers/scheduler.js';

const never = new AbortController().signal;
const DENY_RM: PolicyRuleInput = { name: 'no-rm', toolName: 'run_shell_command', commandPrefix: 'rm', decision: 'deny' };
const POLICIES: Record<string, PolicyRuleInput[]> = {
  'an allow-list': [{ name: 'everyday', commandPrefix: ['cat', 'echo', 'ls', 'true', 'false', 'printf', 'wait'], decision: 'allow' }, DENY_RM],
  'a deny-only policy': [DENY_RM],
};

for (const [policyName, rules] of Object.entries(POLICIES)) {
  for (const mode of APPROVAL_MODES) {
    test(`${policyName}, ${mode}, headless: no escape runs`, async (t) => {
      const policy = await PolicyEngine.create(checkRules(rules, 'test.toml'));
      const setup = testScheduler(t, { approvalMode: mode, policy });
      const ran = registerRecordingShell(setup.registry, setup.workspace);
      for (const escape of ESCAPES) {
        const [done] = await setup.scheduler.schedule([call('run_shell_command', { command: escape.command })], never);
        const expected = escape.expected === 'denied' ? 'policy_denied' : 'confirmation_required';
        t.is(done?.response.error?.type, expected, `${escape.name}: ${done?.response.error?.message ?? 'it ran'}`);
        if (escape.expected === 'denied') t.regex(done!.response.error!.message, /rule test\.toml rule \d+ \("no-rm"\)/, escape.name);
      }
      t.deepEqual(ran, []);
    });
  }
}

test('yolo with someone to ask: a command that cannot be judged is asked, never run on its own', async (t) => {
  const asked: ConfirmationRequest[] = [];
  const confirm = async (request: ConfirmationRequest) => {
    asked.push(request);
    return { outcome: 'cancel' as const };
  };
  const policy = await PolicyEngine.create(checkRules([DENY_RM], 'test.toml'));
  const setup = testScheduler(t, { approvalMode: 'yolo', policy, confirm });
  const ran = registerRecordingShell(setup.registry, setup.workspace);
  const unjudgeable = ESCAPES.filter((escape) => escape.expected === 'unjudgeable');
  for (const escape of unjudgeable) await setup.scheduler.schedule([call('run_shell_command', { command: escape.command })], never);
  t.is(asked.length, unjudgeable.length, 'each one was asked');
  t.deepEqual(ran, []);
});
