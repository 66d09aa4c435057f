/**
 * A workspace's `.git/` is written by whoever controls the workspace: the
 * model (write_file) or a sandboxed command. Its configuration, and an
 * `include_pattern` shaped like a git pathspec, must not make grep_search
 * read anything outside the workspace, whichever engine answers.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createGrepSearchTool, type GrepEngineChoice } from '../../../src/tools/builtin/grep-search.js';
import type { Tool } from '../../../src/tools/tool.js';
import { llmText, localTool, runTool, useTempWorkspace, type TempWorkspace } from '../../helpers/workspace.js';

const SECRET = 'root:outside-secret-5f1c9a';

/** What the attack writes with file tools only: a repository whose work tree is `/`, reporting full names. */
function plantRepository(ws: TempWorkspace): void {
  ws.write('.git/HEAD', 'ref: refs/heads/master\n');
  ws.write('.git/config', '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = /\n[grep]\n\tfullName = true\n');
  ws.write('.git/objects/.keep', '');
  ws.write('.git/refs/heads/.keep', '');
  ws.write('inside.txt', 'root: an inside line\n');
}

/** Pathspecs that name host files: relative ones climbing out, git's magic, absolute, and globs over the work tree. */
function includePatterns(ws: TempWorkspace): string[] {
  return [
    '../../../../../../../etc/passwd',
    ':(top)etc/passwd',
    ':(top,glob)**/passwd',
    '/etc/passwd',
    '../outside/secret.txt',
    `:(top)${ws.outside.slice(1)}/secret.txt`,
    '**/passwd',
    '**/secret.txt',
  ];
}

/** What the model reads back: the result, or the reason the call was refused. */
async function searchText(tool: Tool<unknown>, params: Record<string, unknown>): Promise<string> {
  const validated = tool.validateParams(params);
  if (!validated.ok) return `invalid_tool_params: ${validated.error}`;
  return llmText(await tool.execute(validated.params, new AbortController().signal));
}

const PASSWD_ROOT_LINE =
  readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((line) => line.startsWith('root:')) ?? 'root:x:0:0:';

for (const engine of ['auto', 'javascript'] as const satisfies readonly GrepEngineChoice[]) {
  for (const pattern of ['[r]oot:', 'root:']) {
    test(`${engine}: a planted .git/config (worktree = /) and pathspec-shaped include patterns read nothing outside (${pattern})`, async (t) => {
      const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': `${SECRET}\n` } });
      plantRepository(ws);
      const tool = localTool(createGrepSearchTool({ name: 'grep_search', engine }), ws);
      for (const include of includePatterns(ws)) {
        const text = await searchText(tool, { pattern, include_pattern: include });
        t.false(text.includes(PASSWD_ROOT_LINE), `${include}: /etc/passwd leaked: ${text}`);
        t.false(text.includes(SECRET), `${include}: the outside file leaked: ${text}`);
        t.notRegex(text, /File: (etc|.*outside)\//, `${include}: a host path was reported: ${text}`);
      }
    });
  }
}

test('a repository the workspace owner configured itself (git init; core.worktree /) does not widen the search', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'inside.txt': 'root: an inside line\n' }, outsideFiles: { 'secret.txt': `${SECRET}\n` } });
  execFileSync('git', ['init', '-q', ws.root]);
  execFileSync('git', ['-C', ws.root, 'config', 'core.worktree', '/']);
  execFileSync('git', ['-C', ws.root, 'config', 'grep.fullName', 'true']);
  const tool = localTool(createGrepSearchTool({ name: 'grep_search', engine: 'auto' }), ws);
  for (const pattern of ['[r]oot:', 'root:', 'outside-secret']) {
    const text = llmText(await runTool(tool, { pattern }));
    t.false(text.includes(PASSWD_ROOT_LINE), text);
    t.false(text.includes(SECRET), text);
  }
  t.regex(llmText(await runTool(tool, { pattern: '[r]oot:' })), /File: inside\.txt\nL1: root: an inside line/);
});

test("an include_pattern that is absolute or climbs with '..' is invalid_tool_params", (t) => {
  const ws = useTempWorkspace(t);
  const tool = localTool(createGrepSearchTool({ name: 'grep_search' }), ws);
  for (const include of ['/etc/passwd', '../x/*.ts', 'src/../../etc/*', '..']) {
    const validated = tool.validateParams({ pattern: 'x', include_pattern: include });
    t.false(validated.ok, include);
    if (!validated.ok) t.regex(validated.error, /include_pattern/);
  }
  t.true(tool.validateParams({ pattern: 'x', include_pattern: 'src/**/..foo.ts' }).ok);
});
