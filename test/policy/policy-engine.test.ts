import test from 'ava';
import { checkRules } from '../../src/policy/load-policy-file.js';
import { PolicyEngine, type PolicyCall } from '../../src/policy/policy-engine.js';
import type { PolicyRuleInput } from '../../src/policy/policy-rule.js';

async function decide(rules: PolicyRuleInput[], call: Partial<PolicyCall> & { toolName: string }) {
  const engine = await PolicyEngine.create(checkRules(rules, 'p.toml'));
  return await engine.decide({ args: {}, mode: 'default', ...call });
}

const shell = (command: string): Partial<PolicyCall> & { toolName: string } => ({ toolName: 'run_shell_command', args: { command } });

test('the highest priority wins, whatever the decision', async (t) => {
  const verdict = await decide(
    [
      { commandPrefix: 'rm', decision: 'deny', priority: 1 },
      { commandPrefix: 'rm -f', decision: 'allow', priority: 5 },
    ],
    shell('rm -f x'),
  );
  t.is(verdict.decision, 'allow');
  t.is(verdict.rule?.index, 2);
});

test('at equal priority deny beats ask_user beats allow', async (t) => {
  const rules: PolicyRuleInput[] = [
    { toolName: 'x', decision: 'allow' },
    { toolName: 'x', decision: 'ask_user' },
  ];
  t.is((await decide(rules, { toolName: 'x' })).decision, 'ask_user');
  t.is((await decide([...rules, { toolName: 'x', decision: 'deny' }], { toolName: 'x' })).decision, 'deny');
});

test('toolName wildcards, mcpName and argsPattern over JSON with sorted keys', async (t) => {
  const rules: PolicyRuleInput[] = [
    { toolName: 'mcp_github_*', decision: 'allow' },
    { mcpName: 'github', argsPattern: '"a":1,"b":2', decision: 'deny', priority: 1 },
  ];
  t.is((await decide(rules, { toolName: 'mcp_github_list', mcpServer: 'github', args: { b: 2, a: 1 } })).decision, 'deny');
  t.is((await decide(rules, { toolName: 'mcp_github_list', mcpServer: 'github', args: { a: 1 } })).decision, 'allow');
  t.is((await decide(rules, { toolName: 'mcp_gitlab_list', mcpServer: 'gitlab' })).decision, 'default');
  t.is((await decide([{ mcpName: 'github', decision: 'deny' }], { toolName: 'mcp_github_list' })).decision, 'default', 'no server, no mcpName match');
});

test('command conditions apply only to run_shell_command', async (t) => {
  t.is((await decide([{ toolName: '*', commandPrefix: 'rm', decision: 'deny' }], { toolName: 'rm', args: { command: 'rm' } })).decision, 'default');
});

test('a rule without command conditions covers every command of the shell tool', async (t) => {
  t.is((await decide([{ toolName: 'run_shell_command', decision: 'allow' }], shell('make && make install > log'))).decision, 'allow');
});

test('without a rule for the shell, an unparsable command is left to the approval mode', async (t) => {
  t.is((await decide([{ toolName: 'read_file', decision: 'allow' }], shell('eval "$X"'))).decision, 'default');
});

test('an allow never covers a command it cannot judge, even a blanket one', async (t) => {
  t.is((await decide([{ toolName: 'run_shell_command', decision: 'allow' }], shell('eval "$X"'))).decision, 'ask_user');
});

test('with no rules at all every call is left to the approval mode', async (t) => {
  t.is((await decide([], shell('rm -rf /'))).decision, 'default');
});
