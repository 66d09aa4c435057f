import test from 'ava';
import { callTurn, functionResponsesOf, startFakeGemini, textChunk, textTurn } from '../helpers/fake-gemini.js';
import { collect, testAgent } from './fixtures.js';

test('aborting mid-stream stops the stream: the connection closes and the send ends cancelled', async (t) => {
  const fake = await startFakeGemini({ chunks: [textChunk('Once upon a time')], end: 'hang' });
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);
  const controller = new AbortController();

  const { events, outcome } = await collect(agent.send('tell a story', { signal: controller.signal }), (event) => {
    if (event.type === 'text') controller.abort();
  });

  t.is(outcome.status, 'cancelled');
  t.is(outcome.error?.code, 'cancelled');
  t.is(outcome.text, 'Once upon a time');
  t.is(events.at(-1)?.type, 'finished');
  await fake.waitForDisconnect(0);
  t.true(fake.requests[0]!.disconnected);
});

test('aborting while a call runs cancels it, and nothing more is sent to the model', async (t) => {
  const fake = await startFakeGemini(callTurn([{ name: 'wait', id: 'w1' }]), textTurn('never'));
  t.teardown(() => fake.close());
  const { agent, log } = testAgent(fake);
  const controller = new AbortController();
  void log.waitStarted.then(() => controller.abort());

  const { events, outcome } = await collect(agent.send('wait', { signal: controller.signal }));

  t.is(outcome.status, 'cancelled');
  t.true(log.waitAborted);
  const result = events.find((e) => e.type === 'tool_result') as { call: { status: string } } | undefined;
  t.is(result?.call.status, 'cancelled');
  t.is(fake.requests.length, 1);
  t.is(fake.pending, 1);
});

test('after a cancelled batch the next prompt joins the cancelled responses in one user turn', async (t) => {
  const fake = await startFakeGemini(callTurn([{ name: 'wait', id: 'w1' }]), textTurn('ok'));
  t.teardown(() => fake.close());
  const { agent, log } = testAgent(fake);
  const controller = new AbortController();
  void log.waitStarted.then(() => controller.abort());
  await collect(agent.send('wait', { signal: controller.signal }));

  const { outcome } = await collect(agent.send('never mind'));

  t.is(outcome.status, 'completed');
  const contents = fake.requests[1]!.body.contents!;
  t.deepEqual(
    contents.map((c) => c.role),
    ['user', 'model', 'user'],
  );
  const [response] = functionResponsesOf(fake.requests[1]);
  t.is(response?.id, 'w1');
  t.regex(String(response?.response?.error), /Cancelled/i);
  t.deepEqual(contents[2]!.parts!.at(-1), { text: 'never mind' });
});

test('a signal aborted before the send starts makes no request', async (t) => {
  const fake = await startFakeGemini(textTurn('x'));
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);
  const controller = new AbortController();
  controller.abort();

  const { outcome } = await collect(agent.send('hi', { signal: controller.signal }));

  t.is(outcome.status, 'cancelled');
  t.is(fake.requests.length, 0);
});
