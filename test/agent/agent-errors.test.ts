import type { ErrorCode } from '../../src/errors.js';
import { createServer } from 'node:net';
import test from 'ava';
import { Agent } from '../../src/agent/agent.js';
import { createGeminiClient } from '../../src/agent/gemini-client.js';
import { callChunk, finishChunk, startFakeGemini, textChunk, textTurn, type FakeTurn } from '../helpers/fake-gemini.js';
import { collect, newLog, testAgent, testRegistry } from './fixtures.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';

async function outcomeOf(turn: FakeTurn) {
  const fake = await startFakeGemini(turn);
  try {
    const { agent, log } = testAgent(fake);
    const { outcome } = await collect(agent.send('hi'));
    return { outcome, log, fake };
  } finally {
    await fake.close();
  }
}

const cases: Array<[string, FakeTurn, ErrorCode, RegExp]> = [
  [
    'HTTP 429',
    { httpError: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' },
    'api_quota_exceeded',
    /quota exceeded \(HTTP 429\): Resource has been exhausted/,
  ],
  [
    'HTTP 500',
    { httpError: 500, message: 'Internal error encountered.', status: 'INTERNAL' },
    'api_server_error',
    /server error \(HTTP 500\): Internal error encountered\./,
  ],
  ['HTTP 403', { httpError: 403, message: 'API key not valid.', status: 'PERMISSION_DENIED' }, 'api_auth_failed', /GEMINI_API_KEY/],
  ['HTTP 404', { httpError: 404, message: 'models/x is not found', status: 'NOT_FOUND' }, 'api_model_not_found', /--model/],
  ['HTTP 400', { httpError: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' }, 'api_bad_request', /HTTP 400\): Invalid JSON payload/],
  [
    'an error event mid-stream',
    { chunks: [textChunk('partial ')], streamError: { code: 429, message: 'Quota exceeded mid-answer', status: 'RESOURCE_EXHAUSTED' } },
    'api_quota_exceeded',
    /Quota exceeded mid-answer/,
  ],
  ['a connection cut mid-stream', { chunks: [textChunk('partial ')], end: 'break' }, 'api_stream_broken', /broke off mid-answer/],
  ['a truncated SSE event', { chunks: [textChunk('partial ')], end: 'truncate' }, 'api_stream_broken', /broke off mid-answer/],
  ['a stream without a finish reason', { chunks: [textChunk('partial ')] }, 'api_stream_broken', /without a finish reason/],
  ['a SAFETY finish', { chunks: [textChunk('Here is how'), finishChunk('SAFETY')] }, 'api_safety_blocked', /blocked .*finishReason SAFETY/],
  [
    'a blocked prompt',
    { chunks: [{ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } }] },
    'api_prompt_blocked',
    /blocked the prompt \(blockReason PROHIBITED_CONTENT\)/,
  ],
  ['a malformed function call', { chunks: [finishChunk('MALFORMED_FUNCTION_CALL')] }, 'api_malformed_function_call', /unusable function call/],
];

for (const [name, turn, code, message] of cases) {
  test(`${name} ends the send with ${code} and a one-line message`, async (t) => {
    const { outcome } = await outcomeOf(turn);
    t.is(outcome.status, 'error');
    t.is(outcome.error?.code, code);
    t.regex(outcome.error?.message ?? '', message);
    t.notRegex(outcome.error?.message ?? '', /\n|\bat .*\.js:\d+/);
    // The API's own text often ends with a full stop; the advice after it must not add a second.
    t.notRegex(outcome.error?.message ?? '', /[.!?]\.(?!\.)/);
  });
}

test('calls in an answer that was then blocked are not run', async (t) => {
  const { outcome, log } = await outcomeOf({ chunks: [callChunk([{ name: 'echo', args: { text: 'x' } }]), finishChunk('SAFETY')] });
  t.is(outcome.error?.code, 'api_safety_blocked');
  t.is(log.runs.length, 0);
});

test('calls in a stream that broke off are not run', async (t) => {
  const { outcome, log } = await outcomeOf({ chunks: [callChunk([{ name: 'echo', args: { text: 'x' } }])], end: 'break' });
  t.is(outcome.error?.code, 'api_stream_broken');
  t.is(log.runs.length, 0);
});

test('an unreachable endpoint is api_network_error', async (t) => {
  // A port that was free a moment ago: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address() as { port: number };
      probe.close(() => resolve(address.port));
    });
  });
  const log = newLog();
  const registry = testRegistry(log);
  const agent = new Agent({
    client: createGeminiClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}` }).models,
    model: 'gemini-test',
    scheduler: new Scheduler({ registry }),
    registry,
  });
  const { outcome } = await collect(agent.send('hi'));
  t.is(outcome.error?.code, 'api_network_error');
  t.regex(outcome.error?.message ?? '', /Cannot reach the Gemini API \(ECONNREFUSED\)/);
});

test('after an API error the next send works and the history stays valid', async (t) => {
  const fake = await startFakeGemini({ httpError: 503, message: 'overloaded', status: 'UNAVAILABLE' }, textTurn('back'));
  t.teardown(() => fake.close());
  const { agent } = testAgent(fake);

  const first = await collect(agent.send('one'));
  const second = await collect(agent.send('two'));

  t.is(first.outcome.error?.code, 'api_server_error');
  t.is(second.outcome.status, 'completed');
  t.deepEqual(fake.requests[1]!.body.contents, [{ role: 'user', parts: [{ text: 'one' }, { text: 'two' }] }]);
});
