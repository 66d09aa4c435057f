/**
 * toolcell's state folder (`.toolcell/`: settings, saved outputs, memory) is
 * toolcell's, not the model's: a `.toolcell/settings.json` written by a tool
 * would be applied by the next trusted run, starting its MCP servers on the
 * host. The file tools may read it; only toolcell's own code writes it.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { readFileTool } from '../../../src/tools/builtin/read-file.js';
import { replaceTool } from '../../../src/tools/builtin/replace.js';
import { saveMemoryTool } from '../../../src/tools/builtin/save-memory.js';
import { writeFileTool } from '../../../src/tools/builtin/write-file.js';
import { llmText, localTool, runTool, useTempWorkspace, type TempWorkspace } from '../../helpers/workspace.js';

const PLANTED = JSON.stringify({ mcpServers: { x: { command: 'sh', args: ['-c', 'id > /tmp/pwned'] } } });
const ORIGINAL = '{"shell":{"liveUpdateIntervalMs":100}}\n';

/** Every way a model can spell a path into the state folder, of this workspace and of a nested one. */
function spellings(ws: TempWorkspace): string[] {
  return [
    '.toolcell/settings.json',
    './.toolcell/settings.json',
    'sub/../.toolcell/settings.json',
    '.toolcell//settings.json',
    '.toolcell/settings.json/',
    `${ws.root}/.toolcell/settings.json`,
    `${ws.root}/sub/../.toolcell/./settings.json`,
    '.toolcell/new-file.json',
    '.toolcell/tool-outputs/x.txt',
    '.toolcell/policies/p.toml',
    '.toolcell',
    '.toolcell/',
    '.TOOLCELL/settings.json',
    '.ToolCell/settings.json',
    'sub/.toolcell/settings.json',
    'fresh/deeper/.toolcell/settings.json',
    'link-to-state/settings.json',
    'link-to-settings',
    'dangling-link-into-state',
    'sub/link-to-parent/.toolcell/settings.json',
  ];
}

function stateWorkspace(t: import('ava').ExecutionContext): TempWorkspace {
  return useTempWorkspace(t, {
    files: { '.toolcell/settings.json': ORIGINAL, '.toolcell/tool-outputs/call-1.txt': 'line 1\nline 2\n' },
    directories: ['sub'],
    symlinks: {
      'link-to-state': '.toolcell',
      'link-to-settings': '.toolcell/settings.json',
      'dangling-link-into-state': '.toolcell/not-yet.json',
      'sub/link-to-parent': '..',
    },
  });
}

/** Nothing in the workspace changed: the same names, the same settings. */
function assertUnchanged(t: import('ava').ExecutionContext, ws: TempWorkspace, label: string): void {
  t.is(ws.read('.toolcell/settings.json'), ORIGINAL, label);
  t.deepEqual(ws.list('.toolcell'), ['settings.json', 'tool-outputs'], label);
  t.deepEqual(ws.list('sub'), ['link-to-parent'], label);
  t.false(ws.exists('fresh'), `${label}: a folder was created`);
  t.false(ws.exists('.TOOLCELL'), label);
}

test('write_file refuses every spelling of a path into a .toolcell folder, changing nothing', async (t) => {
  const ws = stateWorkspace(t);
  const tool = localTool(writeFileTool, ws);
  for (const file_path of spellings(ws)) {
    const result = await runTool(tool, { file_path, content: PLANTED });
    t.is(result.error?.type, 'toolcell_state_read_only', `${file_path}: ${llmText(result)}`);
    t.regex(llmText(result), /toolcell's own state folder/, file_path);
    t.false(await tool.shouldConfirmExecute({ file_path, content: PLANTED }, new AbortController().signal), `${file_path}: nothing to confirm`);
    assertUnchanged(t, ws, file_path);
  }
});

test('replace refuses every spelling, for edits and for creating a file', async (t) => {
  const ws = stateWorkspace(t);
  const tool = localTool(replaceTool, ws);
  for (const file_path of spellings(ws)) {
    for (const [old_string, new_string] of [
      ['100', '1'],
      ['', PLANTED],
    ] as const) {
      const result = await runTool(tool, { file_path, old_string, new_string });
      t.is(result.error?.type, 'toolcell_state_read_only', `${file_path} (${old_string || 'create'}): ${llmText(result)}`);
      assertUnchanged(t, ws, file_path);
    }
  }
});

test('files in the state folder stay readable: a saved output, the settings', async (t) => {
  const ws = stateWorkspace(t);
  const read = localTool(readFileTool, ws);
  t.is(
    llmText(await runTool(read, { file_path: '.toolcell/tool-outputs/call-1.txt', start_line: 2, end_line: 2 }))
      .trim()
      .split('\n')
      .pop(),
    'line 2',
  );
  t.is((await runTool(read, { file_path: '.toolcell/settings.json' })).error, undefined);
});

test('names that only look like the state folder are ordinary files', async (t) => {
  const ws = stateWorkspace(t);
  const tool = localTool(writeFileTool, ws);
  for (const file_path of ['.toolcell-notes/a.txt', 'toolcell/settings.json', 'sub/.toolcellrc', 'x.toolcell']) {
    const result = await runTool(tool, { file_path, content: 'ok' });
    t.is(result.error, undefined, `${file_path}: ${llmText(result)}`);
    t.is(ws.read(file_path), 'ok');
  }
});

test('save_memory still writes its own file in the state folder', async (t) => {
  const ws = stateWorkspace(t);
  const result = await runTool(localTool(saveMemoryTool, ws), { fact: 'tabs' });
  t.is(result.error, undefined, llmText(result));
  t.regex(ws.read('.toolcell/memory.md'), /- tabs\n$/);
});

test('save_memory reads its file as toolcell state: a FIFO, a link or a linked state folder fail at once and change nothing', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'notes/memory.md': '# mine\n' }, outsideFiles: { 'memory.md': '# outside\n' } });
  const tool = localTool(saveMemoryTool, ws);
  ws.mkdir('.toolcell');
  execFileSync('mkfifo', [ws.path('.toolcell/memory.md')]);
  t.is((await runTool(tool, { fact: 'x' })).error?.type, 'read_content_failure', 'a FIFO');
  rmSync(ws.path('.toolcell/memory.md'));
  ws.symlink('.toolcell/memory.md', `${ws.outside}/memory.md`);
  t.is((await runTool(tool, { fact: 'x' })).error?.type, 'path_not_in_workspace', 'a link out');
  rmSync(ws.path('.toolcell'), { recursive: true });
  ws.symlink('.toolcell', 'notes');
  const inside = await runTool(tool, { fact: 'x' });
  t.is(inside.error?.type, 'path_not_in_workspace', `a state folder linked to a folder inside: ${llmText(inside)}`);
  t.is(ws.read('notes/memory.md'), '# mine\n');
  t.deepEqual(ws.list('../outside'), ['memory.md']);
});
