/**
 * A long command output end to end through the real pieces: the shell
 * thread and its PTY, run_shell_command, the scheduler's cut for the model,
 * the saved file, and the chat's view of the finished call.
 */
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import type { CompletedToolCall } from '../../src/scheduler/tool-call.js';
import { registerShellTool } from '../../src/tools/shell/register-shell-tool.js';
import { completedCallLines } from '../../src/ui/chat/calls-view.js';
import { createStyle } from '../../src/ui/style.js';
import { firstDifferentLine, seqText } from '../helpers/seq-output.js';
import { useShellSession } from '../shell/support.js';

async function shellScheduler(t: ExecutionContext, options: { onOutput?: (callId: string, output: unknown) => void } = {}) {
  const { session, workspace } = await useShellSession(t, { service: { liveUpdateIntervalMs: 0 } });
  const registry = new ToolRegistry();
  registerShellTool(registry, { session, workspace: workspace.info });
  const saveDir = join(workspace.info.stateDir, 'tool-outputs');
  const scheduler = new Scheduler({
    registry,
    approvalMode: 'yolo',
    output: { saveDir, workspace: workspace.info },
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
  });
  return { scheduler, workspace, saveDir };
}

function responseOf(done: CompletedToolCall): Record<string, unknown> {
  const part = done.response.responseParts[0] as { functionResponse: { response: Record<string, unknown> } };
  return part.functionResponse.response;
}

const NOTE =
  /\n\.\.\. \[The middle of the output is omitted here: the whole output was (\d+) bytes in (\d+) lines\. The full output is saved at (\S+); read it with read_file and a line range\.\] \.\.\.\n\n/;

test('600,000 lines: the model gets half the budget from each end, the real size and the path of a file holding every line', async (t) => {
  const { scheduler, saveDir } = await shellScheduler(t);
  const [done] = await scheduler.schedule([{ callId: 'seq-1', name: 'run_shell_command', args: { command: 'seq 1 600000' } }], new AbortController().signal);
  t.is(done!.status, 'success');
  const output = String(responseOf(done!)['output']);
  const note = NOTE.exec(output);
  t.truthy(note, output.slice(19_900, 20_400));
  t.deepEqual(note!.slice(1, 4), ['4088895', '600000', join(saveDir, 'seq-1.txt')]);
  const head = output.slice(0, note!.index + 1);
  const tail = output.slice(note!.index + note![0].length);
  // 20,000 characters each, less the part of a line that did not fit.
  t.true(head.length > 19_990 && head.length <= 20_000, `head of ${head.length} characters`);
  t.true(tail.length > 19_990 && tail.length <= 20_000, `tail of ${tail.length} characters`);
  t.true(head.startsWith('Command: seq 1 600000\nDirectory: (root)\nOutput: 1\n2\n3\n'));
  t.regex(tail, /^\d+\n(\d+\n)+599999\n600000\nError: \(none\)\nExit Code: 0\n/);
  t.is(firstDifferentLine(readFileSync(join(saveDir, 'seq-1.txt'), 'utf8'), seqText(600_000)), undefined);
});

test("chat's count of the lines not shown counts the whole output, not the kept text", async (t) => {
  const { scheduler } = await shellScheduler(t);
  const [done] = await scheduler.schedule([{ callId: 'seq-2', name: 'run_shell_command', args: { command: 'seq 1 600000' } }], new AbortController().signal);
  const lines = completedCallLines(done!, createStyle(false), { resultLines: 10 });
  t.deepEqual(lines.slice(1, 3), ['  1', '  2']);
  t.is(lines.at(-1), '  … 599990 more line(s)');
});

test('a cancelled call: the model gets the start and end of what was written and a finished file that says it was cancelled', async (t) => {
  const controller = new AbortController();
  const { scheduler, saveDir, workspace } = await shellScheduler(t, {
    onOutput: (_id, output) => typeof output === 'string' && output.includes('all-printed') && controller.abort(),
  });
  const [done] = await scheduler.schedule(
    [{ callId: 'seq-3', name: 'run_shell_command', args: { command: 'seq 1 100000; echo all-printed; sleep 60' } }],
    controller.signal,
  );
  t.is(done!.status, 'cancelled');
  const output = String(responseOf(done!)['output']);
  t.true(output.length < 41_000, `${output.length} characters`);
  t.deepEqual(NOTE.exec(output)?.slice(1, 4), ['588907', '100001', join(saveDir, 'seq-3.txt')]);
  t.is(readFileSync(join(saveDir, 'seq-3.txt'), 'utf8'), `${seqText(100_000)}all-printed\n[... the command was cancelled here ...]\n`);
  t.deepEqual(workspace.list('.toolcell/tool-outputs'), ['seq-3.txt']);
});
