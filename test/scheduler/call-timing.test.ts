import test, { type ExecutionContext } from 'ava';
import { mock } from 'node:test';
import { z } from 'zod';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import { Scheduler, type SchedulerOptions } from '../../src/scheduler/scheduler.js';
import type { CompletedToolCall } from '../../src/scheduler/tool-call.js';
import type { ToolCallEvent } from '../../src/telemetry/events.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createLocalTool } from '../../src/tools/defined-tool.js';
import { call, tempWorkspace } from '../helpers/scheduler.js';

/**
 * Durations are execution time; the wait for the person's answer is reported
 * apart. The clock is Node's mocked Date, moved by the tools and the
 * "person" below, so every figure is exact and nothing waits for real.
 */

const EXECUTION_MS = 3_000;
const THINKING_MS = 10_000;
const EDITING_MS = 4_000;

test.beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
test.afterEach.always(() => mock.timers.reset());

/** A scheduler whose one tool, `slow_edit`, asks with a diff and takes EXECUTION_MS to run. */
function timedScheduler(t: ExecutionContext, options: Partial<SchedulerOptions> = {}) {
  const workspace = tempWorkspace(t);
  const slowEdit = defineTool({
    name: 'slow_edit',
    description: 'Edits an in-memory file, slowly.',
    kind: 'edit',
    parameters: z.object({ content: z.string() }),
    async confirm({ content }) {
      return { type: 'edit', title: 'Edit f', fileName: 'f', filePath: 'f', fileDiff: `+${content}`, originalContent: '', newContent: content };
    },
    async execute({ content }) {
      mock.timers.tick(EXECUTION_MS);
      return { llmContent: `wrote ${content}`, returnDisplay: content };
    },
    modifiable: { createUpdatedParams: ({ modifiedContent, params }) => ({ ...params, content: modifiedContent }) },
  });
  const registry = new ToolRegistry({ onWarning: () => {} });
  registry.register(createLocalTool(slowEdit, { workspace }));
  const events: ToolCallEvent[] = [];
  const scheduler = new Scheduler({ registry, telemetry: { record: (event) => events.push(event) }, ...options });
  return { scheduler, events };
}

const never = new AbortController().signal;

test.serial('a call the person thought over for 10 s before allowing reports 3 s of execution, and the wait apart', async (t) => {
  const { scheduler, events } = timedScheduler(t, {
    confirm: async () => {
      mock.timers.tick(THINKING_MS);
      return { outcome: 'proceed_once' };
    },
  });
  const [done] = await scheduler.schedule([call('slow_edit', { content: 'x' })], never);
  t.is(done?.status, 'success');
  t.is(done?.durationMs, EXECUTION_MS);
  t.is(done?.approvalWaitMs, THINKING_MS);
  t.like(events[0], { durationMs: EXECUTION_MS, approvalWaitMs: THINKING_MS });
});

test.serial('an editor round trip counts as waiting, not as execution', async (t) => {
  let asked = 0;
  const { scheduler, events } = timedScheduler(t, {
    confirm: async () => {
      mock.timers.tick(THINKING_MS);
      return { outcome: asked++ === 0 ? 'modify_with_editor' : 'proceed_once' };
    },
    editor: async ({ proposedContent }) => {
      mock.timers.tick(EDITING_MS);
      return `${proposedContent} edited`;
    },
  });
  const [done] = await scheduler.schedule([call('slow_edit', { content: 'x' })], never);
  t.is(done?.status, 'success');
  t.is(done?.decision, 'modify');
  t.is(done?.durationMs, EXECUTION_MS);
  t.is(done?.approvalWaitMs, THINKING_MS + EDITING_MS + THINKING_MS);
  t.like(events[0], { durationMs: EXECUTION_MS, approvalWaitMs: THINKING_MS + EDITING_MS + THINKING_MS });
});

test.serial('a call that did not ask has no wait; one that never ran took 0 ms', async (t) => {
  const { scheduler: yolo } = timedScheduler(t, { approvalMode: 'yolo' });
  const [ran] = await yolo.schedule([call('slow_edit', { content: 'x' })], never);
  t.is(ran?.durationMs, EXECUTION_MS);
  t.false('approvalWaitMs' in ran!);

  const { scheduler: declining } = timedScheduler(t, {
    confirm: async () => {
      mock.timers.tick(THINKING_MS);
      return { outcome: 'cancel' };
    },
  });
  const [declined] = await declining.schedule([call('slow_edit', { content: 'x' })], never);
  t.is(declined?.status, 'cancelled');
  t.is(declined?.durationMs, 0);
  t.is(declined?.approvalWaitMs, THINKING_MS);

  const { scheduler: headless, events } = timedScheduler(t);
  const [denied] = await headless.schedule([call('slow_edit', { content: 'x' }), call('no_such_tool')], never);
  t.is(denied?.response.error?.type, 'confirmation_required');
  t.is(denied?.durationMs, 0);
  t.deepEqual(
    events.map((event) => event.durationMs),
    [0, 0],
    'the unknown tool never ran either',
  );
});

test.serial('a call cancelled while it runs reports the execution up to the cancel', async (t) => {
  const controller = new AbortController();
  const { scheduler } = timedScheduler(t, {
    approvalMode: 'yolo',
    onUpdate: (calls) => {
      if (calls[0]?.status === 'executing' && !controller.signal.aborted) {
        mock.timers.tick(1_500);
        controller.abort();
      }
    },
  });
  const [done] = (await scheduler.schedule([call('slow_edit', { content: 'x' })], controller.signal)) as CompletedToolCall[];
  t.is(done?.status, 'cancelled');
  // The tool ignores the signal and ends its 3 s after the abort at 1.5 s: all of it was execution.
  t.is(done?.durationMs, 1_500 + EXECUTION_MS);
  t.false('approvalWaitMs' in done!);
});
