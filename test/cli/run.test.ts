import test from 'ava';
import { callTurn, finishChunk, functionResponsesOf, startFakeGemini, textChunk, textTurn, type FakeTurn } from '../helpers/fake-gemini.js';
import { runCli } from '../helpers/cli.js';
import { useTempWorkspace } from '../helpers/workspace.js';

async function fakeModel(t: import('ava').ExecutionContext, ...turns: FakeTurn[]) {
  const fake = await startFakeGemini(...turns);
  t.teardown(() => fake.close());
  return { fake, env: { GEMINI_API_KEY: 'test-key', GOOGLE_API_KEY: '', GOOGLE_GEMINI_BASE_URL: fake.url } };
}

test.serial('text output: the answer on stdout, exit 0', async (t) => {
  const ws = useTempWorkspace(t);
  const { fake, env } = await fakeModel(t, { chunks: [textChunk('Hello '), textChunk('world'), finishChunk()] });

  const result = await runCli(['run', '--workspace', ws.root, 'say hello'], { env });

  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, 'Hello world\n');
  t.is(fake.requests[0]?.apiKey, 'test-key');
  t.is(fake.requests[0]?.model, 'gemini-2.5-flash');
});

test.serial('--model picks the model and the prompt can come from stdin', async (t) => {
  const ws = useTempWorkspace(t);
  const { fake, env } = await fakeModel(t, textTurn('ok'));

  const result = await runCli(['run', '-w', ws.root, '--model', 'gemini-2.5-pro'], { env, input: 'from stdin\n' });

  t.is(result.code, 0, result.stderr);
  t.is(fake.requests[0]?.model, 'gemini-2.5-pro');
  t.deepEqual(fake.requests[0]?.body.contents?.[0]?.parts, [{ text: 'from stdin\n' }]);
});

test.serial('text output: a real read_file call runs in the worker pool and its content goes back to the model', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'notes.txt': 'alpha\nbeta\n' } });
  const { fake, env } = await fakeModel(t, callTurn([{ name: 'read_file', args: { file_path: 'notes.txt' } }]), textTurn('The file has two lines.'));

  const result = await runCli(['run', '-w', ws.root, 'what is in notes.txt?'], { env });

  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, 'The file has two lines.\n');
  t.regex(result.stderr, /→ read_file/);
  t.regex(result.stderr, /✓ read_file/);
  const [response] = functionResponsesOf(fake.requests[1]);
  t.is(response?.name, 'read_file');
  t.regex(String(response?.response?.output), /alpha\nbeta/);
});

test.serial('headless, an edit is denied unless --approval allows it', async (t) => {
  const ws = useTempWorkspace(t);
  const write = { name: 'write_file', args: { file_path: 'out.txt', content: 'written\n' } };
  const denied = await fakeModel(t, callTurn([write]), textTurn('I could not write it.'));

  const first = await runCli(['run', '-w', ws.root, 'write out.txt'], { env: denied.env });

  t.is(first.code, 0, first.stderr);
  t.false(ws.exists('out.txt'));
  t.regex(first.stderr, /✗ write_file .*confirmation_required/);
  t.regex(String(functionResponsesOf(denied.fake.requests[1])[0]?.response?.error), /needs confirmation/);

  const allowed = await fakeModel(t, callTurn([write]), textTurn('Done.'));
  const second = await runCli(['run', '-w', ws.root, '--approval', 'autoEdit', 'write out.txt'], { env: allowed.env });

  t.is(second.code, 0, second.stderr);
  t.is(ws.read('out.txt'), 'written\n');
});

test.serial('json output: one object with the response, the calls and the stats', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'A' } });
  const { env } = await fakeModel(t, callTurn([{ name: 'read_file', args: { file_path: 'a.txt' }, id: 'r1' }]), textTurn('A it is.'));

  const result = await runCli(['run', '-w', ws.root, '--output', 'json', 'read a.txt'], { env });

  t.is(result.code, 0, result.stderr);
  const json = JSON.parse(result.stdout);
  t.is(json.status, 'success');
  t.is(json.response, 'A it is.');
  t.like(json.tool_calls[0], { tool_id: 'r1', tool_name: 'read_file', parameters: { file_path: 'a.txt' }, status: 'success' });
  t.like(json.stats, { turns: 2, tool_calls: 1, total_tokens: 30 });
  t.is(json.error, undefined);
});

test.serial('a missing API key is a one-line error naming the variables, exit 2, no request', async (t) => {
  const ws = useTempWorkspace(t);
  const { fake, env } = await fakeModel(t, textTurn('never'));

  const result = await runCli(['run', '-w', ws.root, 'hi'], { env: { ...env, GEMINI_API_KEY: '', GOOGLE_API_KEY: '' } });

  t.is(result.code, 2);
  t.regex(result.stderr, /^toolcell run: No Gemini API key: set GEMINI_API_KEY \(or GOOGLE_API_KEY\)/);
  t.is(result.stderr.trim().split('\n').length, 1);
  t.is(fake.requests.length, 0);
});

test.serial('GOOGLE_API_KEY works when GEMINI_API_KEY is unset', async (t) => {
  const ws = useTempWorkspace(t);
  const { fake, env } = await fakeModel(t, textTurn('ok'));

  const result = await runCli(['run', '-w', ws.root, 'hi'], { env: { ...env, GEMINI_API_KEY: '', GOOGLE_API_KEY: 'google-key' } });

  t.is(result.code, 0, result.stderr);
  t.is(fake.requests[0]?.apiKey, 'google-key');
});

test.serial('a quota error is one line with its code, exit 1', async (t) => {
  const ws = useTempWorkspace(t);
  const { env } = await fakeModel(t, { httpError: 429, message: 'Quota exceeded for metric generate_content_requests.', status: 'RESOURCE_EXHAUSTED' });

  const result = await runCli(['run', '-w', ws.root, 'hi'], { env });

  t.is(result.code, 1);
  t.is(
    result.stderr,
    'toolcell run: Gemini API quota exceeded (HTTP 429): Quota exceeded for metric generate_content_requests. Wait and retry, or check your plan and rate limits. [api_quota_exceeded]\n',
  );
});

test.serial('the turn limit ends the run with exit 53', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'A' } });
  const read = { name: 'read_file', args: { file_path: 'a.txt' } };
  const { fake, env } = await fakeModel(t, callTurn([read]), callTurn([read]), callTurn([read]));

  const result = await runCli(['run', '-w', ws.root, '--max-turns', '2', 'loop'], { env });

  t.is(result.code, 53);
  t.regex(result.stderr, /Stopped after 2 model turn\(s\).*\[max_turns_exceeded\]/);
  t.is(fake.requests.length, 2);
});

test.serial('usage errors exit 2 with a one-line reason', async (t) => {
  const ws = useTempWorkspace(t);
  const { env } = await fakeModel(t);

  const badOutput = await runCli(['run', '-w', ws.root, '--output', 'yaml', 'hi'], { env });
  const badTurns = await runCli(['run', '-w', ws.root, '--max-turns', '0', 'hi'], { env });
  const emptyPrompt = await runCli(['run', '-w', ws.root], { env, input: '   \n' });
  const badWorkspace = await runCli(['run', '-w', ws.path('missing'), 'hi'], { env });

  for (const result of [badOutput, badTurns, emptyPrompt, badWorkspace]) t.is(result.code, 2, result.stderr);
  t.regex(badOutput.stderr, /yaml/);
  t.regex(badTurns.stderr, /integer >= 1/);
  t.regex(emptyPrompt.stderr, /the prompt is empty/);
  t.regex(badWorkspace.stderr, /not an existing folder/);
});

test.serial('Ctrl+C (SIGINT) during the stream stops it and exits 130', async (t) => {
  const ws = useTempWorkspace(t);
  const { fake, env } = await fakeModel(t, { chunks: [textChunk('thinking very hard')], end: 'hang' });
  let pid = 0;
  const running = runCli(['run', '-w', ws.root, '-o', 'stream-json', 'think'], { env, onSpawn: (p) => (pid = p) });
  await fake.waitForRequests(1);
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.kill(pid, 'SIGINT');

  const result = await running;

  t.is(result.code, 130, result.stderr);
  await fake.waitForDisconnect(0);
  const last = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
  t.like(last, { type: 'result', status: 'error', error: { type: 'cancelled' } });
});
