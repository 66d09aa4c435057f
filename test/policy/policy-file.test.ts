import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { isToolcellError } from '../../src/errors.js';
import { loadPolicyFile, parsePolicyText } from '../../src/policy/load-policy-file.js';
import { loadPolicySources } from '../../src/policy/policy-sources.js';

function tempDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-policy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function policyError(t: ExecutionContext, text: string): string {
  const error = t.throws(() => parsePolicyText(text, '/p/bad.toml'));
  t.true(isToolcellError(error));
  t.is((error as { code?: string }).code, 'invalid_policy');
  return error!.message;
}

test('a file that is not TOML is invalid_policy naming the file and the line, not quoting it', (t) => {
  const message = policyError(t, '[[rule]]\ntoolName = "x"\ndecision = allow-secret-text\n');
  t.regex(message, /\/p\/bad\.toml: not valid TOML \(line 3/);
  t.notRegex(message, /secret/);
});

test('a misspelt field is invalid_policy naming the file, the rule and the field', (t) => {
  const message = policyError(t, '[[rule]]\ntoolName = "a"\ndecision = "allow"\n\n[[rule]]\ncomandPrefix = "rm"\ndecision = "deny"\n');
  t.regex(message, /\/p\/bad\.toml: rule 2: comandPrefix is not a known field/);
});

test('a bad decision, mode, priority or regular expression names its field', (t) => {
  t.regex(policyError(t, '[[rule]]\ntoolName = "a"\ndecision = "maybe"\n'), /rule 1: decision must be allow, deny or ask_user/);
  t.regex(policyError(t, '[[rule]]\ntoolName = "a"\ndecision = "deny"\nmodes = ["auto"]\n'), /rule 1: modes\.0 must be default, autoEdit, yolo or plan/);
  t.regex(policyError(t, '[[rule]]\ntoolName = "a"\ndecision = "deny"\npriority = "high"\n'), /rule 1: priority must be a number/);
  t.regex(policyError(t, '[[rule]]\ncommandRegex = "rm("\ndecision = "deny"\n'), /rule 1: commandRegex must be a valid regular expression/);
  t.regex(policyError(t, '[[rule]]\ndecision = "deny"\n'), /rule 1: must name toolName, mcpName, commandPrefix or commandRegex/);
  t.regex(policyError(t, 'rules = []\n'), /rules is not a known field/);
});

test('a shell-only field on a rule for another tool is invalid_policy: it would never match', (t) => {
  t.regex(
    policyError(t, '[[rule]]\ntoolName = "read_file"\ncommandPrefix = "cat"\ndecision = "deny"\n'),
    /\/p\/bad\.toml: rule 1: commandPrefix must not be set on a rule for read_file: it applies only to run_shell_command/,
  );
  t.regex(
    policyError(t, '[[rule]]\ntoolName = ["write_file", "replace"]\ncommandRegex = "x"\ndecision = "deny"\n'),
    /rule 1: commandRegex must not be set on a rule for write_file, replace/,
  );
  t.regex(policyError(t, '[[rule]]\ntoolName = "write_file"\nallowRedirection = true\ndecision = "allow"\n'), /rule 1: allowRedirection must not be set/);
  t.regex(
    policyError(t, '[[rule]]\nmcpName = "github"\ncommandPrefix = "gh"\ndecision = "deny"\n'),
    /rule 1: commandPrefix must not be set on a rule with mcpName/,
  );
  // A name pattern that covers the shell tool is fine.
  t.is(parsePolicyText('[[rule]]\ntoolName = "run_*"\ncommandPrefix = "rm"\ndecision = "deny"\n', '/p/ok.toml').length, 1);
  t.is(parsePolicyText('[[rule]]\ntoolName = ["read_file", "run_shell_command"]\ncommandPrefix = "rm"\ndecision = "deny"\n', '/p/ok.toml').length, 1);
});

test("Gemini CLI's snake_case allow_redirection and deny_message are accepted", (t) => {
  const [rule] = parsePolicyText(
    '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "echo"\ndecision = "allow"\nallow_redirection = true\ndeny_message = "no"\n',
    'g.toml',
  );
  t.true(rule!.allowRedirection);
  t.is(rule!.denyMessage, 'no');
});

test('a --policy file that does not exist is invalid_policy; a missing optional one is no rules', (t) => {
  const dir = tempDir(t);
  const error = t.throws(() => loadPolicyFile(join(dir, 'none.toml'), { required: true, origin: 'user' }));
  t.is((error as { code?: string }).code, 'invalid_policy');
  t.deepEqual(loadPolicyFile(join(dir, 'none.toml'), { required: false, origin: 'user' }), []);
});

function writePolicy(dir: string, name: string, rule: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), `[[rule]]\n${rule}\n`);
}

test("sources: the user's files, a trusted workspace's, then --policy files; an untrusted workspace's are not read", (t) => {
  const home = tempDir(t);
  const workspace = tempDir(t);
  writePolicy(join(home, '.toolcell', 'policies'), 'b.toml', 'toolName = "b"\ndecision = "deny"');
  writePolicy(join(home, '.toolcell', 'policies'), 'a.toml', 'toolName = "a"\ndecision = "deny"');
  writePolicy(join(workspace, '.toolcell', 'policies'), 'w.toml', 'toolName = "w"\ndecision = "allow"');
  const extra = join(home, 'extra.toml');
  writeFileSync(extra, '[[rule]]\ntoolName = "x"\ndecision = "allow"\n');
  const names = (trusted: boolean) =>
    loadPolicySources({ homeDir: home, workspace, workspaceTrusted: trusted, files: [extra] }).map((rule) => rule.toolNames?.[0]);
  t.deepEqual(names(true), ['a', 'b', 'w', 'x']);
  t.deepEqual(names(false), ['a', 'b', 'x']);
});

test("a trusted workspace's policies folder that is a symbolic link is not read", (t) => {
  const home = tempDir(t);
  const workspace = tempDir(t);
  const elsewhere = tempDir(t);
  writePolicy(elsewhere, 'w.toml', 'toolName = "w"\ndecision = "allow"');
  mkdirSync(join(workspace, '.toolcell'));
  symlinkSync(elsewhere, join(workspace, '.toolcell', 'policies'));
  t.deepEqual(loadPolicySources({ homeDir: home, workspace, workspaceTrusted: true }), []);
});
