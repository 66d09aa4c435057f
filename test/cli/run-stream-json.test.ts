import test from 'ava';
import { callChunk, finishChunk, startFakeGemini, textChunk, textTurn } from '../helpers/fake-gemini.js';
import { runCli } from '../helpers/cli.js';
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
    ['init', 'message', 'message', 'tool_call', 'tool_call', 'tool_result', 'tool_result', 'message', 'result'],
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
    stats: { turns: 2, tool_calls: 2, total_tokens: 30, input_tokens: 20, output_tokens: 10 },
  });
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
