import test from 'ava';
import { StreamJsonWriter } from '../../src/ui/headless/stream-json.js';
import { emptyUsage } from '../../src/agent/events.js';

function writer() {
  const lines: Array<Record<string, unknown>> = [];
  const out = new StreamJsonWriter((line) => {
    if (!line.endsWith('\n') || line.slice(0, -1).includes('\n')) throw new Error('not one line');
    lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { out, lines };
}

test('live output becomes tool_output lines: what is new since the last one, or a byte count for binary streams', (t) => {
  const { out, lines } = writer();
  out.toolOutput('c1', 'compiling');
  out.toolOutput('c1', 'compiling\nlinking');
  out.toolOutput('c2', 'other call');
  out.toolOutput('c1', { type: 'binary_progress', bytesReceived: 2048 });
  t.like(lines[0], { type: 'tool_output', tool_id: 'c1', output: 'compiling' });
  t.like(lines[1], { type: 'tool_output', tool_id: 'c1', output: '\nlinking' });
  t.like(lines[2], { type: 'tool_output', tool_id: 'c2', output: 'other call' });
  t.like(lines[3], { type: 'tool_output', tool_id: 'c1', binary: true, bytes_received: 2048 });
  t.deepEqual(Object.keys(lines[0]!).slice(0, 2), ['type', 'timestamp']);
});

test('warnings are error lines of severity warning; quiet events have no line', (t) => {
  const { out, lines } = writer();
  out.agentEvent({ type: 'turn_started', turn: 1 });
  out.agentEvent({ type: 'thought', text: 'hmm' });
  out.agentEvent({ type: 'usage', turn: 1, usage: emptyUsage() });
  out.agentEvent({ type: 'warning', code: 'max_tokens', message: 'cut short' });
  t.is(lines.length, 1);
  t.like(lines[0], { type: 'error', severity: 'warning', code: 'max_tokens', message: 'cut short' });
});

test('a turn-limit stop is an error line and a result with status error', (t) => {
  const { out, lines } = writer();
  out.result(
    {
      status: 'max_turns',
      text: 'partial',
      turns: 3,
      toolCalls: 3,
      usage: { promptTokens: 1, outputTokens: 2, cachedTokens: 0, totalTokens: 3 },
      durationMs: 10,
      error: { code: 'max_turns_exceeded', message: 'Stopped after 3 model turn(s)' },
    },
    { model: 'gemini-test' },
  );
  t.like(lines[0], { type: 'error', severity: 'error', code: 'max_turns_exceeded' });
  t.like(lines[1], {
    type: 'result',
    status: 'error',
    response: 'partial',
    error: { type: 'max_turns_exceeded' },
    stats: {
      total_tokens: 3,
      input_tokens: 1,
      output_tokens: 2,
      cached: 0,
      input: 1,
      duration_ms: 10,
      turns: 3,
      tool_calls: 3,
      models: { 'gemini-test': { total_tokens: 3, input_tokens: 1, output_tokens: 2, cached: 0, input: 1 } },
    },
  });
});
