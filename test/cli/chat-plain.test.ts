import test from 'ava';
import { callTurn, functionResponsesOf, startFakeGemini, textTurn } from '../helpers/fake-gemini.js';
import { runCli } from '../helpers/cli.js';
import { useTempWorkspace } from '../helpers/workspace.js';

test('without a terminal, prompts and answers are read as lines and nothing is redrawn', async (t) => {
  const ws = useTempWorkspace(t);
  const fake = await startFakeGemini(callTurn([{ name: 'write_file', args: { file_path: 'p.txt', content: 'piped\n' }, id: 'w' }]), textTurn('Done via pipe.'));
  t.teardown(() => fake.close());

  const result = await runCli(['chat', '-w', ws.root, '--sandbox', 'none'], {
    env: { GEMINI_API_KEY: 'k', GOOGLE_GEMINI_BASE_URL: fake.url },
    input: 'please write p.txt\n1\n',
  });

  t.is(result.code, 0, result.stderr);
  t.is(ws.read('p.txt'), 'piped\n');
  t.regex(result.stdout, /\[default\] >/);
  t.regex(result.stdout, /Apply this change\?\n {2}1\. Yes, allow once/);
  t.regex(result.stdout, /Done via pipe\./);
  // eslint-disable-next-line no-control-regex
  t.notRegex(result.stdout, /\x1b\[/, 'no escape codes when the output is not a terminal');
  t.is(functionResponsesOf(fake.requests[1])[0]?.id, 'w');
});

test('a missing API key stops chat before it starts, exit 2', async (t) => {
  const ws = useTempWorkspace(t);
  const result = await runCli(['chat', '-w', ws.root], { env: { GEMINI_API_KEY: '', GOOGLE_API_KEY: '' } });
  t.is(result.code, 2);
  t.regex(result.stderr, /^toolcell chat: No Gemini API key: set GEMINI_API_KEY/);
});
