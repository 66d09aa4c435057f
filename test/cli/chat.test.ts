import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { callTurn, functionResponsesOf, startFakeGemini, textChunk, textTurn, type FakeGemini, type FakeTurn } from '../helpers/fake-gemini.js';
import { cliPath } from '../helpers/cli.js';
import { KEYS, spawnPty, type PtySession } from '../helpers/pty.js';
import { type TempWorkspace, useTempWorkspace } from '../helpers/workspace.js';

interface Chat {
  pty: PtySession;
  fake: FakeGemini;
  ws: TempWorkspace;
}

/** `toolcell chat` in a real PTY, talking to a scripted model. */
async function startChat(t: ExecutionContext, turns: FakeTurn[], options: { env?: NodeJS.ProcessEnv; files?: Record<string, string> } = {}): Promise<Chat> {
  const ws = useTempWorkspace(t, { files: options.files ?? {} });
  const fake = await startFakeGemini(...turns);
  const pty = spawnPty({
    command: process.execPath,
    args: [cliPath, 'chat', '--workspace', ws.root, '--sandbox', 'none'],
    env: { ...process.env, GEMINI_API_KEY: 'test-key', GOOGLE_GEMINI_BASE_URL: fake.url, NO_COLOR: '1', ...options.env },
    cols: 100,
    rows: 30,
  });
  t.teardown(async () => {
    pty.kill();
    await fake.close();
  });
  await pty.waitForScreen(/approval: default/);
  return { pty, fake, ws };
}

async function prompt(chat: Chat, text: string): Promise<void> {
  chat.pty.write(text);
  await chat.pty.waitForScreen(new RegExp(`> ${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  chat.pty.write(KEYS.enter);
}

const writeCall = (file: string, content: string, id?: string) => ({ name: 'write_file', args: { file_path: file, content }, ...(id ? { id } : {}) });

test.serial('streams the answer, keeps the approval mode visible, and switches it with Shift+Tab and /approval', async (t) => {
  const chat = await startChat(t, [{ chunks: [textChunk('Hello '), textChunk('from the model.'), { candidates: [{ finishReason: 'STOP' }] }] }]);

  await prompt(chat, 'hi');
  await chat.pty.waitForTranscript(/Hello from the model\./);
  chat.pty.write(KEYS.shiftTab);
  await chat.pty.waitForScreen(/approval: autoEdit/);
  chat.pty.write(KEYS.shiftTab);
  await chat.pty.waitForScreen(/approval: yolo/);
  await prompt(chat, '/approval plan');
  await chat.pty.waitForScreen(/approval: plan/);
  await prompt(chat, '/quit');

  t.is(await chat.pty.exited(), 0);
  t.regex(chat.pty.transcript(), /Approval mode: yolo \(nothing asks/);
});

test.serial('an edit shows its diff; "allow once" writes the file and the model gets the result', async (t) => {
  const chat = await startChat(t, [callTurn([writeCall('notes.txt', 'new line\n', 'w1')]), textTurn('Written.')], { files: { 'notes.txt': 'old line\n' } });

  await prompt(chat, 'update notes');
  const screen = await chat.pty.waitForScreen(/Apply this change\?/);
  t.regex(screen, /1\. Yes, allow once/);
  t.regex(screen, /3\. Modify with external editor/);
  t.regex(screen, /4\. No \(esc\)/);
  const transcript = chat.pty.transcript();
  t.regex(transcript, /-old line/);
  t.regex(transcript, /\+new line/);
  chat.pty.write('1');

  await chat.pty.waitForTranscript(/Written\./);
  t.is(chat.ws.read('notes.txt'), 'new line\n');
  t.regex(chat.pty.transcript(), /✓ write_file/);
  const [response] = functionResponsesOf(chat.fake.requests[1]);
  t.is(response?.id, 'w1');
  t.is(response?.response?.error, undefined);
});

test.serial('"allow always" is remembered for the session: the next edit does not ask', async (t) => {
  const chat = await startChat(t, [callTurn([writeCall('a.txt', 'A\n')]), callTurn([writeCall('b.txt', 'B\n')]), textTurn('Both done.')]);

  await prompt(chat, 'write two files');
  await chat.pty.waitForScreen(/Apply this change\?/);
  chat.pty.write(KEYS.down);
  await chat.pty.waitForScreen(/❯ 2\. Yes, allow always/);
  chat.pty.write(KEYS.enter);

  await chat.pty.waitForTranscript(/Both done\./);
  t.is(chat.ws.read('a.txt'), 'A\n');
  t.is(chat.ws.read('b.txt'), 'B\n');
  t.is(chat.pty.transcript().match(/Apply this change\?/g)?.length ?? 0, 0, 'the dialog left the screen once answered');
  t.is(chat.pty.transcript().match(/Confirm Write/g)?.length, 1, 'only the first edit asked');
});

test.serial('"modify with external editor" opens $EDITOR on the proposal and applies the edited version', async (t) => {
  const ws = useTempWorkspace(t);
  const editor = join(ws.outside, 'fake-editor.sh');
  writeFileSync(editor, '#!/bin/sh\nprintf "edited by the user\\n" > "$1"\n');
  chmodSync(editor, 0o755);
  const chat = await startChat(t, [callTurn([writeCall('plan.txt', 'model proposal\n')]), textTurn('Saved your version.')], {
    env: { EDITOR: editor, VISUAL: '' },
  });

  await prompt(chat, 'write a plan');
  await chat.pty.waitForScreen(/Apply this change\?/);
  chat.pty.write('3');
  // The dialog comes back with the edited proposal's diff.
  await chat.pty.waitForTranscript(/\+edited by the user/);
  await chat.pty.waitForScreen(/Apply this change\?/);
  chat.pty.write('1');

  await chat.pty.waitForTranscript(/Saved your version\./);
  t.is(chat.ws.read('plan.txt'), 'edited by the user\n');
  t.deepEqual(chat.fake.requests[1]?.body.contents?.[1]?.parts, [
    { functionCall: { name: 'write_file', args: { file_path: 'plan.txt', content: 'model proposal\n' } } },
  ]);
});

test.serial('Esc declines: nothing is written and the model is not asked again', async (t) => {
  const chat = await startChat(t, [callTurn([writeCall('no.txt', 'nope\n')]), textTurn('never sent')]);

  await prompt(chat, 'write no.txt');
  await chat.pty.waitForScreen(/Apply this change\?/);
  chat.pty.write(KEYS.escape);

  await chat.pty.waitForTranscript(/The tool calls were declined\./);
  t.false(chat.ws.exists('no.txt'));
  t.is(chat.fake.requests.length, 1);
  t.regex(chat.pty.transcript(), /⊘ write_file/);
  await chat.pty.waitForScreen(/^> $/m);
});

test.serial('Ctrl+C during a streaming answer cancels it and the chat goes on', async (t) => {
  const chat = await startChat(t, [{ chunks: [textChunk('A very long story begins')], end: 'hang' }, textTurn('Short answer.')]);

  await prompt(chat, 'tell a story');
  await chat.pty.waitForScreen(/A very long story begins/);
  chat.pty.write(KEYS.ctrlC);
  await chat.pty.waitForTranscript(/⊘ Cancelled\./);
  await chat.fake.waitForDisconnect(0);

  await prompt(chat, 'shorter please');
  await chat.pty.waitForTranscript(/Short answer\./);
  t.pass();
});

test.serial('colours: diffs are coloured on a terminal, and NO_COLOR turns every colour off', async (t) => {
  const turns = () => [callTurn([writeCall('c.txt', 'added\n')]), textTurn('ok')];
  const coloured = await startChat(t, turns(), { env: { NO_COLOR: '' } });
  await prompt(coloured, 'colour');
  await coloured.pty.waitForScreen(/Apply this change\?/);
  t.true(coloured.pty.raw().includes('\x1b[32m+added'), 'the added line is green');

  const plain = await startChat(t, turns(), { env: { NO_COLOR: '1' } });
  await prompt(plain, 'plain');
  await plain.pty.waitForScreen(/Apply this change\?/);
  // eslint-disable-next-line no-control-regex
  t.notRegex(plain.pty.raw(), /\x1b\[(3\d|9\d|1|2|7)m/, 'no SGR colour or weight codes');
  t.regex(plain.pty.transcript(), /\+added/);
});
