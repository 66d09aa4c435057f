import test from 'ava';
import type { ConfirmationRequest } from '../../src/scheduler/confirmation-flow.js';
import { ConfirmDialog, detailsBlock, dialogFor } from '../../src/ui/chat/confirm-dialog.js';
import type { Key } from '../../src/ui/chat/keyboard.js';
import { createStyle } from '../../src/ui/style.js';

const plain = createStyle(false);
const key = (name: string, extra: Partial<Key> = {}): Key => ({ name, sequence: extra.sequence ?? name, ctrl: false, meta: false, shift: false, ...extra });

function request(details: ConfirmationRequest['details']): ConfirmationRequest {
  return { callId: 'c', toolName: 'tool', params: {}, description: 'does a thing', details };
}

const exec = request({
  type: 'exec',
  title: 'Confirm Shell Command',
  command: 'npm test -- --watch',
  rootCommand: 'npm',
  directory: '/work/app',
  sandbox: 'docker (toolcell-sandbox:1)',
});
const mcp = request({ type: 'mcp', title: 'Confirm MCP Tool', serverName: 'github', toolName: 'create_issue', toolDisplayName: 'Create issue' });
const info = request({ type: 'info', title: 'Confirm Web Fetch', prompt: 'Summarise these pages', urls: ['https://a.example/x', 'https://b.example/y'] });
const edit = request({
  type: 'edit',
  title: 'Confirm Edit: a.txt',
  fileName: 'a.txt',
  filePath: '/w/a.txt',
  fileDiff: '--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-old\n+new\n',
  originalContent: 'old\n',
  newContent: 'new\n',
});

test('exec shows the command and where it runs', (t) => {
  const text = detailsBlock(exec, plain).join('\n');
  t.regex(text, /Command: {3}npm test -- --watch/);
  t.regex(text, /Directory: \/work\/app/);
  t.regex(text, /Runs in: {3}docker \(toolcell-sandbox:1\)/);
  const dialog = dialogFor(exec, { canModify: false });
  t.is(dialog.question, 'Allow execution of "npm"?');
  t.deepEqual(
    dialog.choices.map((c) => c.outcome),
    ['proceed_once', 'proceed_always', 'cancel'],
  );
});

test('mcp shows the server and the tool, with per-tool and per-server "always"', (t) => {
  const text = detailsBlock(mcp, plain).join('\n');
  t.regex(text, /MCP server: github/);
  t.regex(text, /Tool: +create_issue \(Create issue\)/);
  t.deepEqual(
    dialogFor(mcp, { canModify: false }).choices.map((c) => c.outcome),
    ['proceed_once', 'proceed_always_tool', 'proceed_always_server', 'cancel'],
  );
});

test('info shows the URLs', (t) => {
  const text = detailsBlock(info, plain).join('\n');
  t.regex(text, /- https:\/\/a\.example\/x\n.*- https:\/\/b\.example\/y/);
});

test('edit shows a coloured unified diff, and offers the editor only for modifiable tools', (t) => {
  const coloured = detailsBlock(edit, createStyle(true)).join('\n');
  t.true(coloured.includes('\x1b[32m+new'));
  t.true(coloured.includes('\x1b[31m-old'));
  t.true(coloured.includes('\x1b[36m@@ -1 +1 @@'));
  t.deepEqual(
    dialogFor(edit, { canModify: true }).choices.map((c) => c.outcome),
    ['proceed_once', 'proceed_always', 'modify_with_editor', 'cancel'],
  );
  t.false(dialogFor(edit, { canModify: false }).choices.some((c) => c.outcome === 'modify_with_editor'));
});

test('arrow keys move and wrap, Enter and numbers choose, Esc declines, Ctrl+C interrupts', (t) => {
  const dialog = new ConfirmDialog(dialogFor(exec, { canModify: false }));
  t.is(dialog.handle(key('up')), 'moved');
  t.is(dialog.selected, 2);
  t.is(dialog.handle(key('down')), 'moved');
  t.is(dialog.selected, 0);
  dialog.handle(key('down'));
  t.deepEqual(dialog.handle(key('return', { sequence: '\r' })), { outcome: 'proceed_always' });
  t.deepEqual(dialog.handle(key('1')), { outcome: 'proceed_once' });
  t.is(dialog.handle(key('9')), undefined);
  t.deepEqual(dialog.handle(key('escape', { sequence: '\x1b' })), { outcome: 'cancel' });
  t.is(dialog.handle(key('c', { ctrl: true, sequence: '\x03' })), 'interrupt');
});

test('the selected option is marked', (t) => {
  const dialog = new ConfirmDialog(dialogFor(info, { canModify: false }));
  dialog.handle(key('down'));
  const lines = dialog.lines(plain);
  t.is(lines[0], 'Do you want to proceed?');
  t.is(lines[1], '  1. Yes, allow once');
  t.is(lines[2], '❯ 2. Yes, allow always');
});

test('typed answers in plain mode', (t) => {
  const { choices } = dialogFor(edit, { canModify: true });
  t.is(ConfirmDialog.answerFromLine('3', choices), 'modify_with_editor');
  t.is(ConfirmDialog.answerFromLine(' y ', choices), 'proceed_once');
  t.is(ConfirmDialog.answerFromLine('always', choices), 'proceed_always');
  t.is(ConfirmDialog.answerFromLine('no', choices), 'cancel');
  t.is(ConfirmDialog.answerFromLine('7', choices), undefined);
  t.is(ConfirmDialog.answerFromLine('maybe', choices), undefined);
});
