import test from 'ava';
import { loadPolicyFile } from '../../src/policy/load-policy-file.js';
import { PolicyEngine, type PolicyVerdict } from '../../src/policy/policy-engine.js';
import { SAMPLE_POLICY, TABLE } from '../fixtures/policy/command-table.js';

let engine: PolicyEngine;

test.before(async () => {
  engine = await PolicyEngine.create(loadPolicyFile(SAMPLE_POLICY, { required: true, origin: 'user' }));
});

function decide(command: string, mode: 'default' | 'yolo' = 'default'): PolicyVerdict {
  return engine.decide({ toolName: 'run_shell_command', args: { command }, mode });
}

test('the table has at least 120 commands', (t) => {
  t.true(TABLE.length >= 120, `${TABLE.length} rows`);
});

for (const [command, expected, why] of TABLE) {
  test(`${JSON.stringify(command)} → ${expected} (${why})`, (t) => {
    const verdict = decide(command);
    t.is(verdict.decision, expected, verdict.reason);
  });
}

test('a 1 MB argument is parsed and allowed like a short one', (t) => {
  t.is(decide(`echo ${'a'.repeat(1024 * 1024)}`).decision, 'allow');
});

test('a 1 MB list that starts with a denied command is denied', (t) => {
  const command = `rm -rf / && ${'ls && '.repeat(Math.floor((1024 * 1024) / 6))}ls`;
  t.true(command.length >= 1024 * 1024);
  const verdict = decide(command);
  t.is(verdict.decision, 'deny');
  t.is(verdict.rule?.name, 'no-rm');
});

test('a 1 MB list of 174,000 commands is never allowed: past 10,000 simple commands the engine asks', (t) => {
  const command = `${'ls && '.repeat(Math.floor((1024 * 1024) / 6))}rm -rf /`;
  t.is(decide(command).decision, 'ask_user');
});

test('a 1 MB command with an unbalanced quote at the end is never allowed', (t) => {
  t.is(decide(`${'ls; '.repeat(256 * 1024)}echo "open`).decision, 'ask_user');
});

test('deny rules hold in yolo', (t) => {
  t.is(decide('ls && rm x', 'yolo').decision, 'deny');
});
