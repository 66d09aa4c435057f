/**
 * A tenant engine's budget: the parse thread's CPU time for the tenant's
 * commands is charged to it, and a command waits for it before the thread
 * takes it; a call cancelled while it waits is never judged as allowed.
 */
import test from 'ava';
import type { WorkBudget } from '../../src/contracts/work-budget.js';
import { parsePolicyText } from '../../src/policy/load-policy-file.js';
import { PolicyEngine } from '../../src/policy/policy-engine.js';

const RULES = `[[rule]]\ncommandPrefix = "rm"\ndecision = "deny"\n\n[[rule]]\ncommandPrefix = ["echo", "a"]\ndecision = "allow"\n`;
const shell = (command: string) => ({ toolName: 'run_shell_command', args: { command }, mode: 'yolo' as const });
/** About 100 KiB of backtick substitutions: each judged as a command of its own (the long-command thread's costliest input). */
const LONG = `echo ${'`a` '.repeat(25_000)}`;

test("parsing a tenant's commands is charged to its budget, long ones on the long-command thread included", async (t) => {
  const operator = await PolicyEngine.create(parsePolicyText(RULES, 'operator.toml'));
  const charges: number[] = [];
  const budget: WorkBudget = { admit: async () => {}, charge: (cpuMs) => void charges.push(cpuMs) };
  const tenant = await PolicyEngine.forTenant(operator, [], { budget });
  t.is((await tenant.decide(shell('rm -rf x'))).decision, 'deny');
  await tenant.decide(shell(LONG));
  t.is(charges.length, 2);
  t.true(charges[1]! > charges[0]!, `the long command cost more: ${charges.join(', ')} ms`);
  await operator.decide(shell(LONG));
  t.is(charges.length, 2, "the operator's own engine charges nobody");
});

test('a command whose budget holds it is not judged until admitted; cancelled meanwhile, it comes back as cannot be judged, never allowed', async (t) => {
  const operator = await PolicyEngine.create(parsePolicyText(RULES, 'operator.toml'));
  const charges: number[] = [];
  const budget: WorkBudget = {
    admit: (signal) => new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true })),
    charge: (cpuMs) => void charges.push(cpuMs),
  };
  const tenant = await PolicyEngine.forTenant(operator, [], { budget });
  const controller = new AbortController();
  const verdict = tenant.decide(shell('echo a'), { signal: controller.signal });
  controller.abort();
  const decided = await verdict;
  t.not(decided.decision, 'allow');
  t.not(decided.decision, 'default');
  t.regex(decided.reason, /cancelled/);
  t.deepEqual(charges, [], 'nothing was parsed');
});
