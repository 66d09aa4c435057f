import test from 'ava';
import { join } from 'node:path';
import { MEMORY_SECTION_HEADING, appendMemory, normalizeFact } from '../../../src/tools/builtin/memory-file.js';
import { saveMemoryTool } from '../../../src/tools/builtin/save-memory.js';
import type { EditConfirmationDetails } from '../../../src/tools/tool.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

const signal = new AbortController().signal;

test('creates .toolcell/memory.md with the section and the fact', async (t) => {
  const ws = useTempWorkspace(t);
  const result = await runTool(localTool(saveMemoryTool, ws), { fact: 'The user prefers tabs' });
  t.is(result.error, undefined);
  t.is(llmText(result), `Okay, I've remembered that: "The user prefers tabs"`);
  t.is(ws.read('.toolcell/memory.md'), `${MEMORY_SECTION_HEADING}\n- The user prefers tabs\n`);
});

test('appends further facts to the same section', async (t) => {
  const ws = useTempWorkspace(t);
  const tool = localTool(saveMemoryTool, ws);
  await runTool(tool, { fact: 'one' });
  await runTool(tool, { fact: '- two' });
  t.is(ws.read('.toolcell/memory.md'), `${MEMORY_SECTION_HEADING}\n- one\n- two\n`);
});

test('keeps other content and sections around the memory section', (t) => {
  const before = `# Notes\n\nintro\n\n${MEMORY_SECTION_HEADING}\n- a\n\n## Other\ntext\n`;
  t.is(appendMemory(before, 'b'), `# Notes\n\nintro\n\n${MEMORY_SECTION_HEADING}\n- a\n- b\n\n## Other\ntext\n`);
  t.is(appendMemory('# Notes', 'x'), `# Notes\n\n${MEMORY_SECTION_HEADING}\n- x\n`);
  t.is(appendMemory('# Notes\n', 'x'), `# Notes\n\n${MEMORY_SECTION_HEADING}\n- x\n`);
});

test('facts become one list item line', (t) => {
  t.is(normalizeFact('  -- multi\nline\r\nfact '), 'multi line fact');
  t.is(normalizeFact(' - '), '');
});

test('a fact that is empty once normalized is invalid', async (t) => {
  const ws = useTempWorkspace(t);
  t.is((await runTool(localTool(saveMemoryTool, ws), { fact: ' - ' })).error?.type, 'invalid_tool_params');
  t.false(ws.exists('.toolcell'));
});

test('confirm shows the memory file diff without writing', async (t) => {
  const ws = useTempWorkspace(t);
  const details = (await localTool(saveMemoryTool, ws).shouldConfirmExecute({ fact: 'x' }, signal)) as EditConfirmationDetails;
  t.is(details.type, 'edit');
  t.is(details.fileName, '.toolcell/memory.md');
  t.regex(details.fileDiff, /\+- x/);
  t.false(ws.exists('.toolcell'));
});

test('a state directory symlinked out of the workspace is refused', async (t) => {
  const ws = useTempWorkspace(t);
  ws.symlink('.toolcell', ws.outside);
  const result = await runTool(localTool(saveMemoryTool, ws), { fact: 'x' });
  t.is(result.error?.type, 'path_not_in_workspace');
  t.deepEqual(ws.list('../outside'), []);
});

test('its location is the memory file, so saves are serialized', (t) => {
  const ws = useTempWorkspace(t);
  t.deepEqual(localTool(saveMemoryTool, ws).toolLocations({ fact: 'x' }), [{ path: join(ws.root, '.toolcell', 'memory.md') }]);
});
