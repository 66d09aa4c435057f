import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { allowedInChatFile, alwaysAllowPrefixes, saveAllowedPrefixes } from '../../src/policy/allowed-in-chat.js';
import { splitCommand } from '../../src/policy/split-command.js';
import { loadPolicySources } from '../../src/policy/policy-sources.js';
import { PolicyEngine } from '../../src/policy/policy-engine.js';
import type { ConfirmationRequest } from '../../src/scheduler/confirmation-flow.js';
import { call, registerRecordingShell, testScheduler } from '../helpers/scheduler.js';

function tempHome(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolcell-home-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('"allow always" means the name and subcommand of each simple command, and nothing for what cannot be judged', async (t) => {
  const prefixes = (command: string) => alwaysAllowPrefixes(splitCommand(command));
  t.deepEqual(prefixes('git status --short | wc -l'), ['git status', 'wc']);
  t.deepEqual(prefixes('ls -la && npm test'), ['ls', 'npm test']);
  t.is(prefixes('eval "$X"'), undefined);
  t.is(prefixes('echo hi > notes.txt'), undefined);
  t.is(prefixes('FOO=1 make'), undefined);
});

test('saved prefixes become allow rules in ~/.toolcell/policies/allowed-in-chat.toml, once each', async (t) => {
  const home = tempHome(t);
  const added = await saveAllowedPrefixes(['git status', 'wc'], { homeDir: home });
  t.is(added.length, 2);
  t.is((await saveAllowedPrefixes(['wc', 'npm test'], { homeDir: home })).length, 1);
  const text = readFileSync(allowedInChatFile(home), 'utf8');
  t.regex(text, /commandPrefix = "git status"\ndecision = "allow"/);
  const engine = await PolicyEngine.create(loadPolicySources({ homeDir: home }));
  t.is((await engine.decide({ toolName: 'run_shell_command', args: { command: 'git status && npm test' }, mode: 'default' })).decision, 'allow');
  t.is((await engine.decide({ toolName: 'run_shell_command', args: { command: 'git push' }, mode: 'default' })).decision, 'default');
});

test('the scheduler shows the prefixes and saves them when the person answers "allow always"', async (t) => {
  const saved: string[][] = [];
  const asked: ConfirmationRequest[] = [];
  const confirm = async (request: ConfirmationRequest) => {
    asked.push(request);
    return { outcome: 'proceed_always' as const };
  };
  const policy = await PolicyEngine.create();
  const { scheduler, registry, workspace } = testScheduler(t, {
    confirm,
    policy,
    alwaysAllow: { file: '/home/u/.toolcell/policies/allowed-in-chat.toml', save: async (prefixes) => void saved.push(prefixes) },
  });
  registerRecordingShell(registry, workspace);
  await scheduler.schedule([call('run_shell_command', { command: 'git status | wc -l' })], new AbortController().signal);
  const details = asked[0]!.details;
  t.is(details.type, 'exec');
  t.deepEqual(details.type === 'exec' ? details.alwaysAllow?.prefixes : undefined, ['git status', 'wc']);
  t.deepEqual(saved, [['git status', 'wc']]);
});
