import test from 'ava';
import { loadPolicyFile } from '../../src/policy/load-policy-file.js';
import { PolicyEngine, type PolicyVerdict } from '../../src/policy/policy-engine.js';
import { MAX_COMMAND_BYTES } from '../../src/policy/split-thread.js';
import { SAMPLE_POLICY, TABLE } from '../fixtures/policy/command-table.js';

let engine: PolicyEngine;

test.before(async () => {
  engine = await PolicyEngine.create(loadPolicyFile(SAMPLE_POLICY, { required: true, origin: 'user' }));
});

function decide(command: string, mode: 'default' | 'yolo' = 'default'): Promise<PolicyVerdict> {
  return engine.decide({ toolName: 'run_shell_command', args: { command }, mode });
}

test('the table has at least 120 commands', async (t) => {
  t.true(TABLE.length >= 120, `${TABLE.length} rows`);
});

for (const [command, expected, why] of TABLE) {
  test(`${JSON.stringify(command)} → ${expected} (${why})`, async (t) => {
    const verdict = await decide(command);
    t.is(verdict.decision, expected, verdict.reason);
  });
}

/** The longest command that can run (`bash -c` takes one argument of at most 128 KiB), and one byte more. */
const AT_CAP = MAX_COMMAND_BYTES;

test('an argument as long as a command can be is parsed and allowed like a short one', async (t) => {
  t.is((await decide(`echo ${'a'.repeat(AT_CAP - 5)}`)).decision, 'allow');
});

test('a command one byte over the cap is never parsed and never allowed', async (t) => {
  const verdict = await decide(`echo ${'a'.repeat(AT_CAP - 4)}`);
  t.is(verdict.decision, 'ask_user');
  t.regex(verdict.reason, /longer than 131071 bytes/);
});

test('the cap counts UTF-8 bytes, not characters', async (t) => {
  t.is((await decide(`echo ${'é'.repeat(AT_CAP / 2)}`)).decision, 'ask_user');
});

test('a list of 9,000 commands that starts with a denied command is denied', async (t) => {
  const command = `rm -rf / && ${'ls && '.repeat(9_000)}ls`;
  const verdict = await decide(command);
  t.is(verdict.decision, 'deny');
  t.is(verdict.rule?.name, 'no-rm');
});

test('a list of more than 10,000 commands is never allowed: past them the engine asks', async (t) => {
  const command = `${'ls;'.repeat(Math.floor((AT_CAP - 20) / 3))}rm -rf /`;
  t.is((await decide(command)).decision, 'ask_user');
});

test('a long command with an unbalanced quote at the end is never allowed', async (t) => {
  t.is((await decide(`${'ls; '.repeat(30_000)}echo "open`)).decision, 'ask_user');
});

test('deny rules hold in yolo', async (t) => {
  t.is((await decide('ls && rm x', 'yolo')).decision, 'deny');
});
