import test from 'ava';
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import type { ToolCall } from '../../src/scheduler/tool-call.js';
import type { ToolCallEvent } from '../../src/telemetry/events.js';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { createTestPool } from '../helpers/pool.js';
import { call, tempWorkspace, testScheduler } from '../helpers/scheduler.js';

const never = new AbortController().signal;

function responseOf(completed: { response: { responseParts: unknown[] } }): Record<string, unknown> {
  const part = completed.response.responseParts[0] as { functionResponse: { response: Record<string, unknown> } };
  return part.functionResponse.response;
}

test('an unknown tool gives a tool_not_registered response', async (t) => {
  const { scheduler } = testScheduler(t);
  const [done] = await scheduler.schedule([call('missing')], never);
  t.is(done?.status, 'error');
  t.is(done?.response.error?.type, 'tool_not_registered');
  t.deepEqual(responseOf(done!), { error: 'Tool "missing" not found in registry.', errorType: 'tool_not_registered' });
});

test('missing, wrongly typed and extra params give invalid_tool_params naming the field', async (t) => {
  const { scheduler } = testScheduler(t);
  const results = await scheduler.schedule([call('wait', {}), call('wait', { label: 5 }), call('wait', { label: 'a', extra: true })], never);
  t.deepEqual(
    results.map((r) => r.response.error?.type),
    ['invalid_tool_params', 'invalid_tool_params', 'invalid_tool_params'],
  );
  t.regex(results[0]!.response.error!.message, /params\/label/);
  t.regex(results[1]!.response.error!.message, /params\/label/);
  t.regex(results[2]!.response.error!.message, /extra/);
});

test('each call moves validating → scheduled → executing → success, and observers see every step', async (t) => {
  const seen: string[] = [];
  const { scheduler } = testScheduler(t, { onUpdate: (calls: readonly ToolCall[]) => seen.push(calls[0]!.status) });
  const [done] = await scheduler.schedule([call('wait', { label: 'x', turns: 1 })], never);
  t.is(done?.status, 'success');
  t.deepEqual([...new Set(seen)], ['validating', 'scheduled', 'executing', 'success']);
  t.deepEqual(responseOf(done!), { output: 'x done' });
});

test('calls of a batch run in parallel', async (t) => {
  const { scheduler, recorder } = testScheduler(t);
  const results = await scheduler.schedule([call('wait', { label: 'a' }), call('wait', { label: 'b' }), call('wait', { label: 'c' })], never);
  t.true(results.every((r) => r.status === 'success'));
  t.is(recorder.maxRunning, 3);
});

for (const size of [2, 40]) {
  test.serial(`a batch of ${size} pooled calls on the caller's signal: no listener-leak warning, and aborting it cancels every call`, async (t) => {
    // Worker-pool calls listen on the signal while they run, as shell and MCP calls do.
    const pool = createTestPool(t, { threads: 2 });
    const registry = new ToolRegistry();
    for (const tool of await pool.createTools({ workspace: tempWorkspace(t) })) registry.register(tool);
    const scheduler = new Scheduler({ registry });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    t.teardown(() => void process.off('warning', onWarning));
    const controller = new AbortController();
    setMaxListeners(10, controller.signal); // Node's default, which the test runner raises
    // Listeners the caller itself holds, as an agent loop does.
    for (let i = 0; i < 6; i++) controller.signal.addEventListener('abort', () => {});
    const running = scheduler.schedule(
      Array.from({ length: size }, () => call('slow', { ms: 60_000 })),
      controller.signal,
    );
    setTimeout(() => controller.abort(), 200);
    const results = await running;
    t.true(
      results.every((r) => r.status === 'cancelled'),
      results.map((r) => r.status).join(),
    );
    await new Promise((resolve) => setImmediate(resolve));
    t.false(warnings.includes('MaxListenersExceededWarning'));
  });
}

test('edits of the same file never overlap and apply in request order; other files run alongside', async (t) => {
  const { scheduler, recorder, files } = testScheduler(t, { approvalMode: 'yolo' });
  await scheduler.schedule(
    [call('fake_edit', { file: 'f', content: '1' }), call('fake_edit', { file: 'f', content: '2' }), call('fake_edit', { file: 'g', content: 'x' })],
    never,
  );
  const f = recorder.events.filter((e) => e.includes(' f:'));
  t.deepEqual(f, ['start f:1', 'end f:1', 'start f:2', 'end f:2']);
  t.is(files.get('f'), '2');
  t.is(recorder.maxRunning, 2);
});

test('live output updates reach onOutput and the executing call', async (t) => {
  const outputs: string[] = [];
  let live: unknown;
  const { scheduler } = testScheduler(t, {
    onOutput: (_id, output) => outputs.push(String(output)),
    onUpdate: (calls) => {
      const c = calls[0]!;
      if (c.status === 'executing' && c.liveOutput) live = c.liveOutput;
    },
  });
  await scheduler.schedule([call('wait', { label: 'o', turns: 3 })], never);
  t.deepEqual(outputs, ['o 0', 'o 1', 'o 2']);
  t.is(live, 'o 2');
});

test('output over the limit is cut to head and tail and the full text is saved to a file the model is told about', async (t) => {
  const workspace = tempWorkspace(t);
  const saveDir = `${workspace.stateDir}/tool-outputs`;
  const { scheduler: limited } = testScheduler(t, { output: { maxChars: 1000, saveDir, workspace } });
  const [done] = await limited.schedule([call('big', { chars: 5000 })], never);
  const output = String(responseOf(done!)['output']);
  t.true(output.startsWith('START'));
  t.true(output.endsWith('END'));
  t.true(output.length < 1400);
  const path = /saved at (\S+);/.exec(output)?.[1];
  t.truthy(path);
  t.is(readFileSync(path!, 'utf8').length, 5008);
  // Half the budget from each end, and the size of the whole output.
  const [head, note, tail] = output.split(/\n\n(\.\.\. \[.*\] \.\.\.)\n\n/);
  t.is(head!.length, 500);
  t.is(tail!.length, 500);
  t.regex(note!, /^\.\.\. \[1 line \(4008 characters\) omitted here: the output was 5008 characters in 1 line\. The full output is saved at /);
});

test('every finished call is recorded in telemetry with decision and outcome', async (t) => {
  const events: ToolCallEvent[] = [];
  const { scheduler } = testScheduler(t, { telemetry: { record: (e) => events.push(e) } });
  await scheduler.schedule([call('wait', { label: 'a', turns: 1 }), call('nope'), call('fake_edit', { file: 'f', content: 'c' })], never);
  t.deepEqual(events.map((e) => [e.tool, e.outcome, e.decision, e.errorType]).sort(), [
    ['fake_edit', 'error', 'denied', 'confirmation_required'],
    ['nope', 'error', 'denied', 'tool_not_registered'],
    ['wait', 'success', 'auto', undefined],
  ]);
  t.true(events.every((e) => e.event === 'tool_call' && typeof e.durationMs === 'number'));
});

test('a second batch cannot start while one is running', async (t) => {
  const { scheduler } = testScheduler(t);
  const first = scheduler.schedule([call('wait', { label: 'a' })], never);
  await t.throwsAsync(scheduler.schedule([call('wait', { label: 'b' })], never), { message: /while other tool calls are running/ });
  await first;
});

test('duplicate call ids in one batch are refused', async (t) => {
  const { scheduler } = testScheduler(t);
  const c = call('wait', { label: 'a' });
  await t.throwsAsync(scheduler.schedule([c, c], never), { message: /Duplicate call id/ });
});

test('bad Scheduler options are refused naming the field', (t) => {
  const registry = new ToolRegistry();
  t.throws(() => new Scheduler({} as never), { instanceOf: TypeError, message: 'Scheduler: options.registry must have get()' });
  t.throws(() => new Scheduler({ registry, approvalMode: 'auto' as 'yolo' }), {
    instanceOf: TypeError,
    message: 'Scheduler: options.approvalMode must be default, autoEdit, yolo or plan',
  });
  t.throws(() => new Scheduler({ registry, output: { maxChars: 0 } }), {
    instanceOf: RangeError,
    message: 'Scheduler: options.output.maxChars must be at least 1',
  });
  t.throws(() => new Scheduler({ registry, confirm: 'yes' as never }), { instanceOf: TypeError, message: 'Scheduler: options.confirm must be a function' });
  t.throws(() => new Scheduler({ registry, aproval: 'yolo' } as never), { instanceOf: TypeError, message: 'Scheduler: options.aproval is not a known option' });
  const scheduler = new Scheduler({ registry });
  t.throws(() => scheduler.setApprovalMode('never' as 'plan'), { instanceOf: TypeError, message: /approvalMode must be default, autoEdit, yolo or plan/ });
  t.is(scheduler.approvalMode, 'default');
});
