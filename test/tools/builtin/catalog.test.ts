import test from 'ava';
import { builtinToolDefinitions } from '../../../src/tools/builtin/catalog.js';
import { createLocalTool } from '../../../src/tools/defined-tool.js';
import { createTestPool } from '../../helpers/pool.js';
import { llmText, useTempWorkspace } from '../../helpers/workspace.js';

const EXPECTED = ['glob', 'grep_search', 'list_directory', 'read_file', 'read_many_files', 'replace', 'save_memory', 'search_file_content', 'write_file'];

test('the catalog holds every built-in file tool once', (t) => {
  t.deepEqual(builtinToolDefinitions.map((definition) => definition.name).sort(), EXPECTED);
});

test('every built-in has a declaration with a strict object schema', (t) => {
  const info = { roots: ['/w'], stateDir: '/w/.toolcell' };
  for (const definition of builtinToolDefinitions) {
    const declaration = createLocalTool(definition, { workspace: info }).declaration();
    const schema = declaration.parametersJsonSchema as { type?: string; additionalProperties?: unknown };
    t.is(schema.type, 'object', definition.name);
    t.is(schema.additionalProperties, false, definition.name);
  }
});

test('edit tools ask with a diff and the others never ask', (t) => {
  for (const definition of builtinToolDefinitions) {
    t.is(definition.confirm !== undefined, definition.kind === 'edit', definition.name);
  }
});

test('the built-ins run in worker threads, confined to the workspace', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'hello from a worker\n' }, outsideFiles: { 'secret.txt': 'SECRET' } });
  ws.symlink('link', `${ws.outside}/secret.txt`);
  const pool = createTestPool(t);
  const tools = new Map((await pool.createTools({ workspace: ws.info })).map((tool) => [tool.name, tool]));
  const signal = new AbortController().signal;
  const read = await tools.get('read_file')?.execute({ file_path: 'a.txt' }, signal);
  t.is(read?.llmContent, 'hello from a worker\n');
  const escaped = await tools.get('read_file')?.execute({ file_path: 'link' }, signal);
  t.is(escaped?.error?.type, 'path_not_in_workspace');
  const confirmation = await tools.get('write_file')?.shouldConfirmExecute({ file_path: 'b.txt', content: 'new' }, signal);
  t.is(confirmation && confirmation.type, 'edit');
  const written = await tools.get('write_file')?.execute({ file_path: 'b.txt', content: 'new' }, signal);
  t.is(written?.error, undefined);
  t.is(ws.read('b.txt'), 'new');
  const found = await tools.get('grep_search')?.execute({ pattern: 'worker' }, signal);
  t.regex(found ? llmText(found) : '', /File: a\.txt\nL1: hello from a worker/);
});
