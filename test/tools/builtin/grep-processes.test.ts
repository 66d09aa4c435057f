import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { runLines } from '../../../src/tools/builtin/grep/run-lines.js';
import { createGrepSearchTool } from '../../../src/tools/builtin/grep-search.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('an abort kills the search process and rejects with AbortError', async (t) => {
  const ws = useTempWorkspace(t);
  const pidFile = ws.path('pid');
  const controller = new AbortController();
  const running = runLines('sh', ['-c', `echo $$ > ${pidFile}; exec sleep 30`], { cwd: ws.root, signal: controller.signal, onLine: () => true });
  while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') await delay(10);
  const pid = Number(readFileSync(pidFile, 'utf8'));
  controller.abort();
  await t.throwsAsync(running, { name: 'AbortError' });
  while (alive(pid)) await delay(10); // SIGKILL is asynchronous; the process must go (ava's timeout fails the test otherwise)
  t.false(alive(pid));
});

test('lines are delivered one by one and the process stops when asked', async (t) => {
  const ws = useTempWorkspace(t);
  const seen: string[] = [];
  const result = await runLines('sh', ['-c', 'printf "a\\nb\\nc\\n"; exec sleep 30'], {
    cwd: ws.root,
    signal: new AbortController().signal,
    onLine: (line) => seen.push(line.toString()) < 2,
  });
  t.deepEqual(seen, ['a', 'b']);
  t.true(result?.stopped);
});

test('a missing command resolves null', async (t) => {
  const ws = useTempWorkspace(t);
  t.is(await runLines('toolcell-no-such-command', [], { cwd: ws.root, signal: new AbortController().signal, onLine: () => true }), null);
});

test('no engine runs programs named in the workspace git config, even for a pattern ripgrep refuses', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'hello\n' } });
  execFileSync('git', ['init', '-q', ws.root]);
  execFileSync('git', ['-C', ws.root, 'add', 'a.txt']);
  const marker = `${ws.outside}/ran`;
  const hook = `${ws.outside}/hook.sh`;
  writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\n`);
  chmodSync(hook, 0o755);
  execFileSync('git', ['-C', ws.root, 'config', 'core.fsmonitor', hook]);
  writeFileSync(ws.path('a.txt'), 'hello again\n'); // a stale index invites a refresh
  const result = await runTool(localTool(createGrepSearchTool({ name: 'g', engine: 'auto' }), ws), { pattern: 'hello(?= again)' });
  t.regex(llmText(result), /L1: hello again/);
  t.false(existsSync(marker));
});
