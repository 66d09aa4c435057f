import test from 'ava';
import { createGeminiClient, resolveApiKey } from '../../src/agent/gemini-client.js';
import { startFakeGemini, textTurn } from '../helpers/fake-gemini.js';

test('GEMINI_API_KEY is preferred, GOOGLE_API_KEY is the fallback', (t) => {
  t.is(resolveApiKey({ GEMINI_API_KEY: 'g', GOOGLE_API_KEY: 'o' }), 'g');
  t.is(resolveApiKey({ GOOGLE_API_KEY: 'o' }), 'o');
  t.is(resolveApiKey({ GEMINI_API_KEY: '  ', GOOGLE_API_KEY: 'o' }), 'o');
});

test('a missing key is one line saying what to set', (t) => {
  const error = t.throws(() => resolveApiKey({}));
  t.is((error as { code?: string }).code, 'api_key_missing');
  t.regex(error.message, /set GEMINI_API_KEY \(or GOOGLE_API_KEY\)/);
  t.notRegex(error.message, /\n/);
});

test('GOOGLE_GEMINI_BASE_URL in the given env moves the endpoint', async (t) => {
  const fake = await startFakeGemini(textTurn('hi'));
  t.teardown(() => fake.close());
  const client = createGeminiClient({ env: { GEMINI_API_KEY: 'env-key', GOOGLE_GEMINI_BASE_URL: fake.url } });

  const stream = await client.models.generateContentStream({ model: 'gemini-x', contents: 'hello' });
  let text = '';
  for await (const chunk of stream) text += chunk.text ?? '';

  t.is(text, 'hi');
  t.is(fake.requests[0]?.apiKey, 'env-key');
  t.is(fake.requests[0]?.model, 'gemini-x');
});

test('a base URL that is not http(s) is refused', (t) => {
  const error = t.throws(() => createGeminiClient({ apiKey: 'k', baseUrl: 'ftp://x' }));
  t.is((error as { code?: string }).code, 'invalid_base_url');
  t.throws(() => createGeminiClient({ apiKey: '' }), { instanceOf: TypeError });
});
