import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { callChunk, callTurn, finishChunk, startFakeGemini, textChunk, textTurn } from '../helpers/fake-gemini.js';
import { runCli } from '../helpers/cli.js';
import { parseGeminiStream } from '../helpers/gemini-stream-json.js';
import { useTempWorkspace } from '../helpers/workspace.js';

interface StreamEvent {
  type: string;
  timestamp: string;
  [key: string]: unknown;
}

/** Parses stream-json output the way a consuming program would: one JSON object per line. */
function parseLines(stdout: string): StreamEvent[] {
  const lines = stdout.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, index) => {
    try {
      return JSON.parse(line) as StreamEvent;
    } catch {
      throw new Error(`line ${index + 1} is not JSON: ${line}`);
    }
  });
}

test('stream-json: every line is an event, in order, with gemini-cli field names', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'one\n', 'b.txt': 'two\n' } });
  const fake = await startFakeGemini(
    {
      chunks: [
        textChunk('Reading both. '),
        callChunk([{ name: 'read_file', args: { file_path: 'a.txt' }, id: 'call-a' }]),
        callChunk([{ name: 'read_file', args: { file_path: 'b.txt' }, id: 'call-b' }]),
        finishChunk(),
      ],
    },
    textTurn('They say one and two.'),
  );
  t.teardown(() => fake.close());

  const result = await runCli(['run', '-w', ws.root, '-o', 'stream-json', 'read a and b'], {
    env: { GEMINI_API_KEY: 'k', GOOGLE_GEMINI_BASE_URL: fake.url },
  });

  t.is(result.code, 0, result.stderr);
  t.is(result.stderr, '');
  const events = parseLines(result.stdout);
  for (const event of events) t.false(Number.isNaN(Date.parse(event.timestamp)), `bad timestamp in ${JSON.stringify(event)}`);
  t.deepEqual(
    events.map((e) => e.type),
    ['init', 'message', 'message', 'tool_use', 'tool_use', 'tool_result', 'tool_result', 'message', 'result'],
  );
  t.like(events[0], { type: 'init', model: 'gemini-2.5-flash', workspace: ws.root, approval_mode: 'default' });
  t.is(typeof events[0]!.session_id, 'string');
  t.like(events[1], { role: 'user', content: 'read a and b' });
  t.like(events[2], { role: 'assistant', content: 'Reading both. ', delta: true });
  t.like(events[3], { tool_id: 'call-a', tool_name: 'read_file', parameters: { file_path: 'a.txt' } });
  t.like(events[4], { tool_id: 'call-b', tool_name: 'read_file', parameters: { file_path: 'b.txt' } });
  t.like(events[5], { tool_id: 'call-a', tool_name: 'read_file', status: 'success' });
  t.like(events[6], { tool_id: 'call-b', status: 'success' });
  t.is(typeof events[5]!.duration_ms, 'number');
  t.like(events[7], { role: 'assistant', content: 'They say one and two.' });
  t.like(events[8], {
    type: 'result',
    status: 'success',
    response: 'Reading both. They say one and two.',
    stats: { turns: 2, tool_calls: 2, total_tokens: 30, input_tokens: 20, output_tokens: 10, input: 20, models: { 'gemini-2.5-flash': { total_tokens: 30 } } },
  });
});

test('stream-json reads with a parser written for Gemini CLI: tool_use and tool_result per call, and live output as deltas', async (t) => {
  const ws = useTempWorkspace(t);
  // Live updates every 50 ms, and pauses of 400 ms between lines: several tool_output events.
  const settings = join(ws.outside, 'settings.json');
  writeFileSync(settings, JSON.stringify({ shell: { liveUpdateIntervalMs: 50 } }));
  const command = 'echo one; sleep 0.4; echo two; sleep 0.4; printf "thr"; sleep 0.4; echo ee';
  const fake = await startFakeGemini(
    callTurn([
      { name: 'run_shell_command', args: { command }, id: 'sh' },
      { name: 'read_file', args: { file_path: 'missing.txt' }, id: 'rf' },
    ]),
    textTurn('Printed three lines.'),
  );
  t.teardown(() => fake.close());

  const result = await runCli(['run', '-w', ws.root, '--sandbox', 'none', '--approval', 'yolo', '--settings', settings, '-o', 'stream-json', 'count'], {
    env: { GEMINI_API_KEY: 'k', GOOGLE_GEMINI_BASE_URL: fake.url },
  });

  t.is(result.code, 0, result.stderr);
  const { events, unknown } = parseGeminiStream(result.stdout);
  t.deepEqual(
    events.map((event) => event.type),
    ['init', 'message', 'tool_use', 'tool_use', 'tool_result', 'tool_result', 'message', 'result'],
  );
  const uses = events.filter((event) => event.type === 'tool_use');
  t.deepEqual(
    uses.map((use) => [use.tool_id, use.tool_name]),
    [
      ['sh', 'run_shell_command'],
      ['rf', 'read_file'],
    ],
  );
  t.like(uses[0], { parameters: { command } });
  const results = events.filter((event) => event.type === 'tool_result');
  t.like(results[0], { tool_id: 'sh', status: 'success' });
  t.like(results[1], { tool_id: 'rf', status: 'error', error: { type: 'file_not_found' } });
  t.like(events.at(-1), { type: 'result', status: 'success', stats: { tool_calls: 2 } });

  // The only events Gemini CLI does not declare are toolcell's documented tool_output lines.
  t.deepEqual([...new Set(unknown.map((event) => event.type))], ['tool_output']);
  const outputs = unknown.filter((event) => event.tool_id === 'sh').map((event) => String(event.output));
  t.true(outputs.length >= 2, `several live updates: ${JSON.stringify(outputs)}`);
  // Each event carries only what is new: together they are the output, said once.
  t.is(outputs.join(''), 'one\ntwo\nthree');
});

test('stream-json: a denied call is a tool_result with its error type, and an API failure ends with error + result lines', async (t) => {
  const ws = useTempWorkspace(t);
  const fake = await startFakeGemini(
    { chunks: [callChunk([{ name: 'write_file', args: { file_path: 'x.txt', content: 'x' }, id: 'w' }]), finishChunk()] },
    { httpError: 500, message: 'backend exploded', status: 'INTERNAL' },
  );
  t.teardown(() => fake.close());

  const result = await runCli(['run', '-w', ws.root, '-o', 'stream-json', 'write x'], { env: { GEMINI_API_KEY: 'k', GOOGLE_GEMINI_BASE_URL: fake.url } });

  t.is(result.code, 1);
  const events = parseLines(result.stdout);
  const toolResult = events.find((e) => e.type === 'tool_result');
  t.like(toolResult, { tool_id: 'w', status: 'error', error: { type: 'confirmation_required' } });
  t.like(events.at(-2), { type: 'error', severity: 'error', code: 'api_server_error' });
  t.like(events.at(-1), { type: 'result', status: 'error', error: { type: 'api_server_error' } });
  t.regex(String((events.at(-1)!.error as { message: string }).message), /backend exploded/);
  t.false(ws.exists('x.txt'));
});
