import test from 'ava';
import { callChunk, callTurn, finishChunk, functionResponsesOf, startFakeGemini, textChunk, textTurn } from '../helpers/fake-gemini.js';
import { collect, testAgent } from './fixtures.js';

test('a text answer streams as text events and completes', async (t) => {
  const fake = await startFakeGemini({ chunks: [textChunk('Hello, '), textChunk('world.'), finishChunk()] });
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);

  const { events, outcome } = await collect(agent.send('hi'));

  t.deepEqual(
    events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text),
    ['Hello, ', 'world.'],
  );
  t.is(outcome.status, 'completed');
  t.is(outcome.text, 'Hello, world.');
  t.is(outcome.turns, 1);
  t.deepEqual(outcome.usage, { promptTokens: 10, outputTokens: 5, cachedTokens: 0, totalTokens: 15 });
  t.is(events.at(-1)?.type, 'finished');
});

test('the request carries the conversation, the key and every FunctionDeclaration with its JSON schema', async (t) => {
  const fake = await startFakeGemini(textTurn('ok'));
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);

  await collect(agent.send('list things'));

  const request = fake.requests[0]!;
  t.is(request.model, 'gemini-test');
  t.is(request.apiKey, 'test-key');
  t.regex(request.path, /alt=sse/);
  t.deepEqual(request.body.contents, [{ role: 'user', parts: [{ text: 'list things' }] }]);
  const declarations = request.body.tools?.[0]?.functionDeclarations ?? [];
  t.deepEqual(
    declarations.map((d) => d.name),
    ['echo', 'needs_ok', 'wait'],
  );
  const echo = declarations.find((d) => d.name === 'echo');
  t.like(echo?.parametersJsonSchema as object, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
});

test('a batch of calls runs after the stream and its responses go back in call order', async (t) => {
  const fake = await startFakeGemini(
    callTurn([
      { name: 'echo', args: { text: 'one' }, id: 'c1' },
      { name: 'echo', args: { text: 'two' }, id: 'c2' },
    ]),
    textTurn('done'),
  );
  t.teardown(() => fake.close());
  const { agent, log } = testAgent(fake);

  const { events, outcome } = await collect(agent.send('go'));

  t.is(outcome.status, 'completed');
  t.is(outcome.turns, 2);
  t.is(outcome.toolCalls, 2);
  t.deepEqual(
    log.runs.map((r) => r.params),
    [{ text: 'one' }, { text: 'two' }],
  );
  t.deepEqual(
    events.filter((e) => e.type === 'tool_result').map((e) => (e as { call: { status: string } }).call.status),
    ['success', 'success'],
  );
  const second = fake.requests[1]!;
  t.deepEqual(
    second.body.contents?.map((c) => c.role),
    ['user', 'model', 'user'],
  );
  t.deepEqual(functionResponsesOf(second), [
    { id: 'c1', name: 'echo', response: { output: 'echo:one' } },
    { id: 'c2', name: 'echo', response: { output: 'echo:two' } },
  ]);
  t.deepEqual(second.body.contents?.[1]?.parts, [
    { functionCall: { id: 'c1', name: 'echo', args: { text: 'one' } } },
    { functionCall: { id: 'c2', name: 'echo', args: { text: 'two' } } },
  ]);
});

test('calls spread over several chunks are all collected, and none runs before the stream ends', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let ranBeforeEnd: boolean | undefined;
  const fake = await startFakeGemini(
    {
      chunks: [
        callChunk([{ name: 'echo', args: { text: 'a' } }]),
        textChunk('thinking about b'),
        async () => {
          // The first call has been sent and parsed by now; nothing may have run yet.
          await new Promise((resolve) => setTimeout(resolve, 50));
          ranBeforeEnd = log.runs.length > 0;
          release();
        },
        callChunk([
          { name: 'echo', args: { text: 'b' } },
          { name: 'echo', args: { text: 'c' } },
        ]),
        finishChunk(),
      ],
    },
    textTurn('done'),
  );
  t.teardown(() => fake.close());
  const { agent, log } = testAgent(fake);

  const { outcome } = await collect(agent.send('go'));
  await gate;

  t.is(ranBeforeEnd, false);
  t.is(outcome.status, 'completed');
  t.deepEqual(
    log.runs.map((r) => r.params),
    [{ text: 'a' }, { text: 'b' }, { text: 'c' }],
  );
  t.deepEqual(
    functionResponsesOf(fake.requests[1]).map((r) => r.response),
    [{ output: 'echo:a' }, { output: 'echo:b' }, { output: 'echo:c' }],
  );
});

test('calls without ids get generated ids, used in their FunctionResponses', async (t) => {
  const fake = await startFakeGemini(
    callTurn([
      { name: 'echo', args: { text: 'x' } },
      { name: 'echo', args: { text: 'y' } },
    ]),
    textTurn('ok'),
  );
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);

  const { events } = await collect(agent.send('go'));

  const ids = events.filter((e) => e.type === 'tool_call').map((e) => (e as { request: { callId: string } }).request.callId);
  t.is(ids.length, 2);
  for (const id of ids) t.regex(id, /^echo-\d+-[0-9a-f]+$/);
  t.not(ids[0], ids[1]);
  t.deepEqual(
    functionResponsesOf(fake.requests[1]).map((r) => r.id),
    ids,
  );
});

test('an unknown tool and bad arguments are answered to the model as errors, and the loop goes on', async (t) => {
  const fake = await startFakeGemini(
    callTurn([
      { name: 'nope', id: 'n1' },
      { name: 'echo', args: { wrong: 1 }, id: 'e1' },
    ]),
    textTurn('sorry'),
  );
  t.teardown(() => fake.close());
  const { agent, log } = testAgent(fake);

  const { outcome } = await collect(agent.send('go'));

  t.is(outcome.status, 'completed');
  t.is(log.runs.length, 0);
  const responses = functionResponsesOf(fake.requests[1]);
  t.regex(String(responses[0]?.response?.error), /not found/);
  t.regex(String(responses[1]?.response?.error), /Invalid parameters/);
});

test('headless, a call that needs confirmation is denied and the model is told so', async (t) => {
  const fake = await startFakeGemini(callTurn([{ name: 'needs_ok', id: 'k1' }]), textTurn('understood'));
  t.teardown(() => fake.close());
  const { agent, log } = testAgent(fake);

  const { events, outcome } = await collect(agent.send('edit it'));

  t.is(outcome.status, 'completed');
  t.is(log.runs.length, 0);
  const result = events.find((e) => e.type === 'tool_result') as { call: { status: string; response: { error?: { type: string } } } };
  t.is(result.call.status, 'error');
  t.is(result.call.response.error?.type, 'confirmation_required');
  t.regex(String(functionResponsesOf(fake.requests[1])[0]?.response?.error), /needs confirmation/);
});

test('the turn limit stops a model that keeps calling tools', async (t) => {
  const fake = await startFakeGemini(
    callTurn([{ name: 'echo', args: { text: '1' } }]),
    callTurn([{ name: 'echo', args: { text: '2' } }]),
    callTurn([{ name: 'echo', args: { text: '3' } }]),
  );
  t.teardown(() => fake.close());
  const { agent, log } = testAgent(fake, { maxTurns: 2 });

  const { outcome } = await collect(agent.send('loop'));

  t.is(outcome.status, 'max_turns');
  t.is(outcome.error?.code, 'max_turns_exceeded');
  t.is(outcome.turns, 2);
  t.is(fake.requests.length, 2);
  t.is(log.runs.length, 2);
});

test('a MAX_TOKENS answer is used, with a warning', async (t) => {
  const fake = await startFakeGemini({ chunks: [textChunk('partial'), finishChunk('MAX_TOKENS')] });
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);

  const { events, outcome } = await collect(agent.send('long story'));

  t.is(outcome.status, 'completed');
  t.truthy(events.find((e) => e.type === 'warning' && e.code === 'max_tokens'));
});

test('the conversation carries over between sends and keeps alternating roles', async (t) => {
  const fake = await startFakeGemini(callTurn([{ name: 'echo', args: { text: 'a' }, id: 'x' }]), textTurn('first'), textTurn('second'));
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);

  await collect(agent.send('one'));
  await collect(agent.send('two'));

  const roles = fake.requests[2]!.body.contents?.map((c) => c.role);
  t.deepEqual(roles, ['user', 'model', 'user', 'model', 'user']);
  t.deepEqual(fake.requests[2]!.body.contents?.at(-1)?.parts, [{ text: 'two' }]);
});

test('send rejects a second concurrent send and bad prompts', async (t) => {
  const fake = await startFakeGemini(textTurn('a'));
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);
  const first = agent.send('one');
  await first.next();
  await t.throwsAsync(() => agent.send('two').next(), { message: /already running/ });
  await t.throwsAsync(() => agent.send('').next(), { instanceOf: TypeError });
  await collect(first);
});

test('thought summaries are reported apart from the answer and not sent back; thought signatures are', async (t) => {
  const fake = await startFakeGemini(
    {
      chunks: [
        { candidates: [{ content: { role: 'model', parts: [{ text: 'pondering', thought: true }] }, index: 0 }] },
        { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'echo', args: { text: 's' } }, thoughtSignature: 'c2ln' }] }, index: 0 }] },
        finishChunk(),
      ],
    },
    textTurn('done'),
  );
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);

  const { events, outcome } = await collect(agent.send('think'));

  t.deepEqual(
    events.filter((e) => e.type === 'thought').map((e) => (e as { text: string }).text),
    ['pondering'],
  );
  t.is(outcome.text, 'done');
  t.deepEqual(fake.requests[1]!.body.contents?.[1]?.parts, [{ functionCall: { name: 'echo', args: { text: 's' } }, thoughtSignature: 'c2ln' }]);
});
