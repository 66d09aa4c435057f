import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync, chmodSync } from 'node:fs';
import { createGrepSearchTool } from '../../../src/tools/builtin/grep-search.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

test('grep_search runs no program named in the workspace git config', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'hello\n' } });
  execFileSync('git', ['init', '-q', ws.root]);
  execFileSync('git', ['-C', ws.root, 'add', 'a.txt']);
  const marker = `${ws.outside}/ran`;
  const hook = `${ws.outside}/hook.sh`;
  writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\n`);
  chmodSync(hook, 0o755);
  execFileSync('git', ['-C', ws.root, 'config', 'core.fsmonitor', hook]);
  writeFileSync(ws.path('a.txt'), 'hello again\n'); // a stale index invites a refresh
  const result = await runTool(localTool(createGrepSearchTool({ name: 'g', engine: 'auto' }), ws), { pattern: 'hello again' });
  t.regex(llmText(result), /L1: hello again/);
  t.false(existsSync(marker));
});
