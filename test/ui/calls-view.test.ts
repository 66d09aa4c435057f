import test from 'ava';
import { activeCallLines, completedCallLines } from '../../src/ui/chat/calls-view.js';
import type { CompletedToolCall, ExecutingToolCall } from '../../src/scheduler/tool-call.js';
import type { LiveOutput, Tool } from '../../src/tools/tool.js';
import { createStyle, sanitize } from '../../src/ui/style.js';

const plain = createStyle(false);
const tool = {
  name: 'run_shell_command',
  describe: (p: { command: string }) => p.command,
  validateParams: (raw: unknown) => ({ ok: true, params: raw }),
} as unknown as Tool<unknown>;

function executing(callId: string): ExecutingToolCall {
  return { status: 'executing', request: { callId, name: 'run_shell_command', args: { command: 'make' } }, tool, params: { command: 'make' }, startTime: 0 };
}

test('a running call shows its description and the tail of its live output', (t) => {
  const output = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n');
  const lines = activeCallLines([executing('a')], new Map<string, LiveOutput>([['a', output]]), plain, { tick: 0, outputLines: 3 });
  t.is(lines[0], '⠋ run_shell_command make');
  t.deepEqual(lines.slice(1), ['  │ line 18', '  │ line 19', '  │ line 20']);
});

test('binary output shows a byte counter instead of the bytes', (t) => {
  const live = new Map<string, LiveOutput>([['a', { type: 'binary_progress', bytesReceived: 1572864 }]]);
  const lines = activeCallLines([executing('a')], live, plain, { tick: 0, outputLines: 3 });
  t.is(lines[1], '  [Receiving binary output… 1.5 MB received]');
});

test('live output cannot move the cursor or recolour the screen', (t) => {
  const live = new Map<string, LiveOutput>([['a', 'ok\x1b[2J\x1b[31mred\x1b]0;title\x07\rdone\x07']]);
  const [, first, second] = activeCallLines([executing('a')], live, plain, { tick: 0, outputLines: 5 });
  t.is(first, '  │ okred');
  t.is(second, '  │ done');
  t.is(sanitize('a\tb\r\nc\u009bd'), 'a    b\ncd');
});

test('finished calls: results are cut, errors and cancellations say their type', (t) => {
  const base = { request: { callId: 'a', name: 'run_shell_command', args: { command: 'make' } }, tool, startTime: 0, durationMs: 1500 };
  const success: CompletedToolCall = { ...base, status: 'success', response: { callId: 'a', responseParts: [], resultDisplay: 'a\nb\nc\nd' } };
  t.deepEqual(completedCallLines(success, plain, { resultLines: 2 }), ['✓ run_shell_command make (1.5 s)', '  a', '  b', '  … 2 more line(s)']);
  const failed: CompletedToolCall = {
    ...base,
    status: 'error',
    response: { callId: 'a', responseParts: [], error: { type: 'shell_execute_error', message: 'exit 2' } },
  };
  t.deepEqual(completedCallLines(failed, plain, { resultLines: 2 }), ['✗ run_shell_command make (1.5 s)', '  shell_execute_error: exit 2']);
  const cancelled: CompletedToolCall = {
    ...base,
    status: 'cancelled',
    response: { callId: 'a', responseParts: [], error: { type: 'cancelled', message: 'User cancelled tool execution.' } },
  };
  t.is(completedCallLines(cancelled, plain, { resultLines: 2 })[1], '  cancelled: User cancelled tool execution.');
});

test('an approved edit is not shown twice; an edit that did not ask shows its diff', (t) => {
  const diff = { fileDiff: '--- f\n+++ f\n@@ -1 +1 @@\n-a\n+b\n', fileName: 'f', filePath: '/w/f', originalContent: 'a\n', newContent: 'b\n' };
  const base = { request: { callId: 'e', name: 'write_file', args: {} }, tool, startTime: 0, durationMs: 5 };
  const auto: CompletedToolCall = { ...base, status: 'success', decision: 'auto', response: { callId: 'e', responseParts: [], resultDisplay: diff } };
  const approved: CompletedToolCall = { ...auto, decision: 'accept' };
  t.true(completedCallLines(auto, plain, { resultLines: 8 }).includes('  +b'));
  t.is(completedCallLines(approved, plain, { resultLines: 8 }).length, 1);
});
