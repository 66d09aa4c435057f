import test from 'ava';
import { lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { OutputSaver, type OutputSaverOptions } from '../../src/shell/output/output-saver.js';
import { useTempWorkspace } from '../helpers/workspace.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const numbered = (from: number, to: number): string => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join('');

function saver(t: Parameters<typeof useTempWorkspace>[0], options: Partial<OutputSaverOptions> = {}) {
  const ws = useTempWorkspace(t);
  const path = ws.path('.toolcell/tool-outputs/call-1.txt');
  return { ws, path, saver: new OutputSaver({ mode: 'pty', path, afterChars: 100, maxBytes: 1 << 20, ...options }) };
}

/** Feeds `text` in chunks of `size` bytes, then finishes with the raw stream's real counts. */
async function run(target: OutputSaver, text: string, options: { size?: number; stopped?: 'cancel' | 'inactivity' | 'wall' | null } = {}) {
  const bytes = encode(text);
  const size = options.size ?? 1000;
  for (let i = 0; i < bytes.length; i += size) target.push(bytes.subarray(i, i + size));
  const lines = (text.match(/\n/g)?.length ?? 0) + (text.length > 0 && !text.endsWith('\n') ? 1 : 0);
  return target.finish({ bytes: bytes.length, lines, stopped: options.stopped ?? null });
}

test('an output under the threshold never touches the disk', async (t) => {
  const { ws, saver: short } = saver(t);
  t.is(await run(short, 'just a few words\n'), undefined);
  t.false(ws.exists('.toolcell'));
});

test('past the threshold the whole output is written as plain text, under its final name only once complete', async (t) => {
  const { ws, path, saver: long } = saver(t);
  const saved = await run(long, `\x1b[32m${numbered(1, 5000).replace(/\n/g, '\r\n')}`, { size: 333 });
  t.is(readFileSync(path, 'utf8'), numbered(1, 5000));
  t.like(saved, { path, lines: 5000, savedLines: 5000, cut: false });
  t.deepEqual(ws.list('.toolcell/tool-outputs'), ['call-1.txt'], 'no temporary file left');
  t.true(saved!.excerpt.startsWith('1\n2\n3\n'));
  t.true(saved!.excerpt.endsWith('4999\n5000\n'));
  t.regex(saved!.excerpt, /\n\[\.\.\. .* omitted \.\.\.\]\n/);
});

test('past the cap the file ends at the last whole line that fits, then says where it was cut and how much was dropped', async (t) => {
  const { path, saver: flood } = saver(t, { maxBytes: 4096 });
  const saved = await run(flood, numbered(1, 100_000), { size: 4096 });
  const file = readFileSync(path, 'utf8');
  const lines = file.split('\n');
  const last = lines.at(-2)!;
  t.is(lines.at(-1), '');
  t.is(lines.slice(0, -2).join('\n') + '\n', numbered(1, lines.length - 2), 'every line before the cut is whole and in place');
  t.true(Buffer.byteLength(file) - Buffer.byteLength(last) - 1 <= 4096);
  t.like(saved, { cut: true, lines: 100_000, savedLines: lines.length - 2 });
  t.regex(
    last,
    new RegExp(
      `^\\[\\.\\.\\. saved output cut here, after line ${lines.length - 2}, at its size cap of 4096 bytes .*: ${100_000 - (lines.length - 2)} more lines were not saved`,
    ),
  );
  t.true(saved!.excerpt.endsWith('99999\n100000\n'), 'the excerpt ends with the end of the output, past the cap');
});

test('a stopped command leaves a file that says so at its end', async (t) => {
  const { path, saver: stopped } = saver(t);
  await run(stopped, numbered(1, 300), { stopped: 'cancel' });
  t.true(readFileSync(path, 'utf8').endsWith('299\n300\n[... the command was cancelled here ...]\n'));
});

test('a discarded output (it turned out binary) leaves nothing behind', async (t) => {
  const { ws, saver: binary } = saver(t);
  binary.push(encode(numbered(1, 500)));
  await binary.discard();
  t.deepEqual(ws.list('.toolcell/tool-outputs'), []);
});

test('a file that cannot be created or written is reported, and nothing is left behind', async (t) => {
  const { ws, path, saver: refused } = saver(t, { create: () => Promise.reject(new Error('no room')) });
  t.like(await run(refused, numbered(1, 500)), { error: 'no room', lines: 500 });
  t.false(ws.exists('.toolcell/tool-outputs/call-1.txt'));
  // A descriptor that cannot be written: the write fails mid-way.
  ws.write('.toolcell/tool-outputs/placeholder', '');
  const readOnly = new OutputSaver({
    mode: 'pty',
    path,
    afterChars: 100,
    maxBytes: 1 << 20,
    create: async (temp) => {
      writeFileSync(temp, '');
      return { handle: await open(temp, 'r'), publish: (name) => rename(temp, join(dirname(temp), name)), discard: () => unlink(temp) };
    },
  });
  const failed = await run(readOnly, numbered(1, 500));
  t.is(failed?.path, undefined);
  t.truthy(failed?.error);
  t.deepEqual(ws.list('.toolcell/tool-outputs'), ['placeholder']);
});

test('a symlink planted at the final name is replaced, never written through', async (t) => {
  const { ws, path, saver: planted } = saver(t);
  const target = ws.write('../outside/victim.txt', 'untouched\n');
  ws.symlink('.toolcell/tool-outputs/call-1.txt', target);
  await run(planted, numbered(1, 500));
  t.is(readFileSync(target, 'utf8'), 'untouched\n');
  t.true(lstatSync(path).isFile());
  t.is(readFileSync(path, 'utf8'), numbered(1, 500));
});

test('swapping the folder for a link while the output is written moves nothing elsewhere: the file is named in the folder it was made in', async (t) => {
  const { ws, saver: raced } = saver(t);
  const bytes = encode(numbered(1, 500));
  raced.push(bytes);
  const folder = ws.path('.toolcell/tool-outputs');
  // The temporary file's name is visible to a command that can list the folder: wait for it as the attacker would.
  let temporary: string | undefined;
  for (let i = 0; i < 500 && temporary === undefined; i++) {
    temporary = ws.exists('.toolcell/tool-outputs') ? readdirSync(folder).find((name) => name.endsWith('.partial')) : undefined;
    if (temporary === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (temporary === undefined) return t.fail('the temporary file never appeared');
  // The swap: the real folder moves aside, a link to a decoy holding a file of the same temporary name takes its place.
  const decoy = ws.path('../decoy');
  mkdirSync(decoy);
  writeFileSync(join(decoy, temporary), 'spoofed\n');
  renameSync(folder, `${folder}-moved`);
  symlinkSync(decoy, folder);
  await raced.finish({ bytes: bytes.length, lines: 500, stopped: null });
  t.deepEqual(readdirSync(decoy), [temporary], 'nothing was renamed or written in the decoy');
  t.is(readFileSync(join(decoy, temporary), 'utf8'), 'spoofed\n');
  t.is(readFileSync(`${folder}-moved/call-1.txt`, 'utf8'), numbered(1, 500), 'the output was published in the folder it was written in');
});
