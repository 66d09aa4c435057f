/**
 * `toolcell policy check` and `--policy` on `toolcell exec`: the decision
 * and its rule as text and JSON, invalid_policy with exit 2, and real shell
 * commands (on the host, `--sandbox none`) allowed or denied headless.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';

const SAMPLE = join(packageRoot, 'test', 'fixtures', 'policy', 'sample.toml');

function tempDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-policy-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs the CLI with an empty home, so the machine's own ~/.toolcell/policies play no part. */
function cli(t: ExecutionContext, args: string[], input?: string) {
  const home = tempDir(t);
  return runCli(args, { env: { HOME: home }, cwd: home, ...(input !== undefined ? { input } : {}) });
}

test('policy check --json prints the decision and the rule that made it', async (t) => {
  const result = await cli(t, [
    'policy',
    'check',
    '--tool',
    'run_shell_command',
    '--args',
    '{"command":"git status && rm -rf /"}',
    '--policy',
    SAMPLE,
    '--json',
  ]);
  t.is(result.code, 0, result.stderr);
  const out = JSON.parse(result.stdout);
  t.is(out.decision, 'deny');
  t.deepEqual(out.rule, { file: SAMPLE, index: 4, name: 'no-rm' });
  t.is(out.command, 'rm -rf /');
});

test('policy check in text names the rule; --headless turns ask_user into deny', async (t) => {
  const asked = await cli(t, ['policy', 'check', '--tool', 'run_shell_command', '--args', '{"command":"curl x"}', '--policy', SAMPLE]);
  t.regex(asked.stdout, /^decision: ask_user\nrule: +\S+sample\.toml rule 7 \("ask before network"\)/);
  const headless = await cli(t, [
    'policy',
    'check',
    '--tool',
    'run_shell_command',
    '--args',
    '{"command":"curl x"}',
    '--policy',
    SAMPLE,
    '--headless',
    '--json',
  ]);
  t.is(JSON.parse(headless.stdout).decision, 'deny');
});

test('policy check without a matching rule reports the approval mode and a null rule', async (t) => {
  const result = await cli(t, ['policy', 'check', '--tool', 'write_file', '--args', '{}', '--approval', 'plan', '--json']);
  const out = JSON.parse(result.stdout);
  t.is(out.decision, 'deny');
  t.is(out.rule, null);
  const yolo = await cli(t, ['policy', 'check', '--tool', 'run_shell_command', '--args', '{"command":"make"}', '--approval', 'yolo', '--json']);
  t.is(JSON.parse(yolo.stdout).decision, 'allow');
});

test('an invalid policy file exits 2 with invalid_policy naming the file and the field', async (t) => {
  const dir = tempDir(t);
  const bad = join(dir, 'bad.toml');
  writeFileSync(bad, '[[rule]]\ntoolName = "x"\ndecison = "deny"\n');
  const check = await cli(t, ['policy', 'check', '--tool', 'x', '--policy', bad]);
  t.is(check.code, 2);
  t.regex(check.stderr, new RegExp(`Invalid policy file ${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: rule 1: decison is not a known field`));
  const exec = await cli(t, ['exec', '--workspace', dir, '--sandbox', 'none', '--policy', bad, '--json'], '[]');
  t.is(exec.code, 2);
  t.regex(exec.stderr, /bad\.toml: rule 1: decison is not a known field/);
});

test('bad --args is a usage error', async (t) => {
  const result = await cli(t, ['policy', 'check', '--tool', 'x', '--args', '[1]']);
  t.is(result.code, 2);
  t.regex(result.stderr, /--args must be a JSON object/);
});

test('exec --policy: an allowed command runs headless; a denied one is refused with policy_denied naming the rule', async (t) => {
  const workspace = tempDir(t);
  const calls = [
    { name: 'run_shell_command', args: { command: 'echo allowed-by-policy' }, id: 'ok' },
    { name: 'run_shell_command', args: { command: 'echo x && rm -rf nothing-here' }, id: 'no' },
  ];
  const result = await cli(t, ['exec', '--workspace', workspace, '--sandbox', 'none', '--policy', SAMPLE, '--json'], JSON.stringify(calls));
  t.is(result.code, 0, result.stderr);
  const [ok, no] = JSON.parse(result.stdout) as Array<{ functionResponse: { response: Record<string, unknown> } }>;
  t.regex(JSON.stringify(ok!.functionResponse.response), /allowed-by-policy/);
  const denied = JSON.stringify(no!.functionResponse.response);
  t.regex(denied, /Denied by policy rule/);
  t.regex(denied, /sample\.toml rule 4 \(\\"no-rm\\"\)/);
});

test('policy check --approval plan says which allow rule plan mode set aside, instead of "no policy rule matches"', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'edits.toml');
  writeFileSync(file, '[[rule]]\nname = "edits ok"\ntoolName = "write_file"\ndecision = "allow"\n');
  const result = await cli(t, [
    'policy',
    'check',
    '--tool',
    'write_file',
    '--args',
    '{"file_path":"a","content":""}',
    '--policy',
    file,
    '--approval',
    'plan',
    '--json',
  ]);
  t.is(result.code, 0, result.stderr);
  const out = JSON.parse(result.stdout);
  t.is(out.decision, 'deny');
  t.regex(out.reason, /plan mode refuses edit tools/);
  t.regex(out.reason, /edits\.toml rule 1 \("edits ok"\) allows this call outside plan mode; plan mode counts an allow rule only when its modes list "plan"/);
  t.notRegex(out.reason, /no policy rule matches/);
  // Listing plan in modes makes the rule count.
  writeFileSync(file, '[[rule]]\nname = "edits ok"\ntoolName = "write_file"\ndecision = "allow"\nmodes = ["plan"]\n');
  const counted = JSON.parse(
    (await cli(t, ['policy', 'check', '--tool', 'write_file', '--args', '{"file_path":"a","content":""}', '--policy', file, '--approval', 'plan', '--json']))
      .stdout,
  );
  t.is(counted.decision, 'allow');
});

test('policy check: a commandPrefix on a rule for read_file is invalid_policy (exit 2)', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'bad.toml');
  writeFileSync(file, '[[rule]]\ntoolName = "read_file"\ncommandPrefix = "cat"\ndecision = "deny"\n');
  const result = await cli(t, ['policy', 'check', '--tool', 'read_file', '--args', '{"file_path":"a"}', '--policy', file]);
  t.is(result.code, 2);
  t.regex(result.stderr, /rule 1: commandPrefix must not be set on a rule for read_file/);
});
