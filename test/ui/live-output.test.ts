import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { packageRoot } from '../../src/paths.js';
import { callTurn, startFakeGemini, textTurn, type FakeTurn } from '../helpers/fake-gemini.js';
import { KEYS, spawnPty } from '../helpers/pty.js';

const fixture = join(packageRoot, 'dist', 'test', 'ui', 'fixtures', 'live-output-chat.js');

async function start(t: ExecutionContext, turns: FakeTurn[]) {
  const control = realpathSync(mkdtempSync(join(tmpdir(), 'toolcell-live-')));
  const fake = await startFakeGemini(...turns);
  const pty = spawnPty({
    command: process.execPath,
    args: [fixture],
    env: { ...process.env, FAKE_GEMINI_URL: fake.url, CONTROL_DIR: control, NO_COLOR: '1' },
    cols: 80,
    rows: 24,
  });
  t.teardown(async () => {
    pty.kill();
    await fake.close();
    rmSync(control, { recursive: true, force: true });
  });
  await pty.waitForScreen(/approval: default/);
  const step = (name: string) => writeFileSync(join(control, name), '');
  return { pty, fake, step };
}

test.serial('a running call shows its description and live output updating in place, then binary progress as a byte counter', async (t) => {
  const { pty, step } = await start(t, [callTurn([{ name: 'build' }]), textTurn('Build finished.')]);
  pty.write('build it');
  await pty.waitForScreen(/> build it/);
  pty.write(KEYS.enter);

  await pty.waitForScreen(/Building the project\n\s+│ step 1/);
  step('next-1');
  const second = await pty.waitForScreen(/│ step 2/);
  t.regex(second, /│ step 1\n\s+│ step 2/, 'the output block grows in place');
  t.is(second.match(/Building the project/g)?.length, 1, 'the call header is drawn once, not repeated');
  step('next-2');
  step('next-3');
  const binary = await pty.waitForScreen(/Receiving binary output… 3\.0 MB received/);
  t.notRegex(binary, /│ step/, 'the byte counter replaced the text output');
  step('done');

  await pty.waitForTranscript(/Build finished\./);
  const transcript = pty.transcript();
  t.regex(transcript, /✓ build Building the project \(/);
  t.regex(transcript, /built in 3 steps/);
  t.notRegex(transcript, /│ step/, 'live output never lands in the scrollback');
});

test.serial('Ctrl+C while a call runs cancels it; the chat stays usable', async (t) => {
  const { pty, fake } = await start(t, [callTurn([{ name: 'build' }]), textTurn('Next answer.')]);
  pty.write('build');
  await pty.waitForScreen(/> build/);
  pty.write(KEYS.enter);
  await pty.waitForScreen(/│ step 1/);

  pty.write(KEYS.ctrlC);

  await pty.waitForTranscript(/⊘ build Building the project/);
  await pty.waitForTranscript(/⊘ Cancelled\./);
  t.is(fake.requests.length, 1, 'the cancelled batch was not sent to the model');
  pty.write('again');
  await pty.waitForScreen(/> again/);
  pty.write(KEYS.enter);
  await pty.waitForTranscript(/Next answer\./);
});
