import test from 'ava';
import { renameSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Part } from '@google/genai';
import { readFileTool } from '../../../src/tools/builtin/read-file.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
const lines = (count: number): string => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

test('reads a whole small text file as is', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'one\ntwo\n' } });
  const result = await runTool(localTool(readFileTool, ws), { file_path: 'a.txt' });
  t.is(result.error, undefined);
  t.is(result.llmContent, 'one\ntwo\n');
});

test('reads an absolute path inside the workspace', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'abs' } });
  t.is(llmText(await runTool(localTool(readFileTool, ws), { file_path: ws.path('a.txt') })), 'abs');
});

test('a line range returns those lines and says how to read on', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': lines(10) } });
  const text = llmText(await runTool(localTool(readFileTool, ws), { file_path: 'a.txt', start_line: 3, end_line: 5 }));
  t.true(text.endsWith('line 3\nline 4\nline 5'));
  t.regex(text, /Showing lines 3-5 of 10 total lines/);
  t.regex(text, /start_line: 6/);
});

test('a long file is cut at 2000 lines with a note', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'long.txt': lines(2500) } });
  const result = await runTool(localTool(readFileTool, ws), { file_path: 'long.txt' });
  const text = llmText(result);
  t.regex(text, /IMPORTANT: The file content has been truncated/);
  t.regex(text, /Showing lines 1-2000 of 2500/);
  t.true(text.endsWith('line 2000'));
  t.is(result.returnDisplay, 'Read lines 1-2000 of 2500 from long.txt');
});

test('very long lines are cut', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'wide.txt': 'x'.repeat(5000) } });
  const text = llmText(await runTool(localTool(readFileTool, ws), { file_path: 'wide.txt' }));
  t.true(text.includes('... [line truncated]'));
  t.false(text.includes('x'.repeat(2001)));
});

test('start_line past the end and end before start are invalid params', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': lines(3) } });
  const tool = localTool(readFileTool, ws);
  t.is((await runTool(tool, { file_path: 'a.txt', start_line: 9 })).error?.type, 'invalid_tool_params');
  t.is((await runTool(tool, { file_path: 'a.txt', start_line: 3, end_line: 2 })).error?.type, 'invalid_tool_params');
});

test('an image comes back as an inlineData part', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'pic.PNG': PNG } });
  const result = await runTool(localTool(readFileTool, ws), { file_path: 'pic.PNG' });
  const [part] = result.llmContent as Part[];
  t.is(part?.inlineData?.mimeType, 'image/png');
  t.deepEqual(Buffer.from(part?.inlineData?.data ?? '', 'base64'), PNG);
});

test('a PDF comes back as an inlineData part', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'doc.pdf': '%PDF-1.4\n%\xff\xff\n' } });
  const [part] = (await runTool(localTool(readFileTool, ws), { file_path: 'doc.pdf' })).llmContent as Part[];
  t.is(part?.inlineData?.mimeType, 'application/pdf');
});

test('an SVG is read as text', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'icon.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>' } });
  t.regex(llmText(await runTool(localTool(readFileTool, ws), { file_path: 'icon.svg' })), /<svg/);
});

test('another binary file gets a message instead of bytes', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'prog.bin': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]) } });
  const result = await runTool(localTool(readFileTool, ws), { file_path: 'prog.bin' });
  t.is(result.error, undefined);
  t.regex(llmText(result), /^Cannot display content of binary file: prog\.bin/);
});

test('a UTF-16 file with a BOM is decoded', async (t) => {
  const body = Buffer.from('héllo\n', 'utf16le');
  const ws = useTempWorkspace(t, { files: { 'u16.txt': Buffer.concat([Buffer.from([0xff, 0xfe]), body]) } });
  t.is(llmText(await runTool(localTool(readFileTool, ws), { file_path: 'u16.txt' })), 'héllo\n');
});

test('a file over 20 MB is file_too_large', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'huge.txt': '' } });
  truncateSync(ws.path('huge.txt'), 21 * 1024 * 1024);
  t.is((await runTool(localTool(readFileTool, ws), { file_path: 'huge.txt' })).error?.type, 'file_too_large');
});

test('a missing file is file_not_found and a directory is target_is_directory', async (t) => {
  const ws = useTempWorkspace(t, { directories: ['d'] });
  const tool = localTool(readFileTool, ws);
  t.is((await runTool(tool, { file_path: 'nope.txt' })).error?.type, 'file_not_found');
  t.is((await runTool(tool, { file_path: 'd' })).error?.type, 'target_is_directory');
});

test('paths leading out of the workspace are refused', async (t) => {
  const ws = useTempWorkspace(t, { outsideFiles: { 'secret.txt': 'SECRET' } });
  ws.symlink('file-link', join(ws.outside, 'secret.txt'));
  ws.symlink('dir-link', ws.outside);
  const tool = localTool(readFileTool, ws);
  for (const file_path of ['../outside/secret.txt', join(ws.outside, 'secret.txt'), '/etc/hostname', 'file-link', 'dir-link/secret.txt']) {
    const result = await runTool(tool, { file_path });
    t.is(result.error?.type, 'path_not_in_workspace', file_path);
    t.false(llmText(result).includes('SECRET'));
  }
});

test('a file whose name is not UTF-8 cannot be named and fails clearly', async (t) => {
  const ws = useTempWorkspace(t);
  writeFileSync(Buffer.concat([Buffer.from(`${ws.root}/caf`), Buffer.from([0xe9])]), 'x');
  const result = await runTool(localTool(readFileTool, ws), { file_path: 'caf\ufffd' });
  t.is(result.error?.type, 'file_not_found');
});

test('a directory swapped for a symlink right before the read is refused', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'sub/a.txt': 'inside' }, outsideFiles: { 'a.txt': 'SECRET' } });
  const tool = localTool(readFileTool, ws);
  // The swap happens on the thread pool while the tool awaits its checks.
  const reads = Array.from({ length: 50 }, () => runTool(tool, { file_path: 'sub/a.txt' }));
  renameSync(ws.path('sub'), ws.path('sub.real'));
  symlinkSync(ws.outside, ws.path('sub'));
  for (const result of await Promise.all(reads)) t.false(llmText(result).includes('SECRET'));
});

test('unknown and wrongly typed params are rejected by validation', (t) => {
  const ws = useTempWorkspace(t);
  const tool = localTool(readFileTool, ws);
  t.false(tool.validateParams({ file_path: 'a', extra: 1 }).ok);
  t.false(tool.validateParams({ file_path: 'a', start_line: 'x' }).ok);
  t.false(tool.validateParams({}).ok);
});
