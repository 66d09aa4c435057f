/**
 * A workspace's settings file is written by whoever controls the workspace,
 * a sandboxed command included: reading it must not hang (FIFO), grow
 * without bound (/dev/zero), follow a link to a host file, or print what it
 * read in an error.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/load-settings.js';
import { MAX_SETTINGS_BYTES, readSettingsText } from '../../src/config/settings-file.js';
import { isToolcellError } from '../../src/errors.js';

const SECRET = 'root:$y$j9T$settings-secret-7d1e:19000:0:99999:7:::';

function folders(t: import('ava').ExecutionContext): { workspace: string; home: string; outside: string } {
  const root = mkdtempSync(join(tmpdir(), 'toolcell-settings-file-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const workspace = join(root, 'ws');
  const home = join(root, 'home');
  const outside = join(root, 'outside');
  for (const folder of [join(workspace, '.toolcell'), home, outside]) mkdirSync(folder, { recursive: true });
  writeFileSync(join(outside, 'shadow'), `${SECRET}\n`);
  return { workspace, home, outside };
}

/** The ToolcellError loadSettings throws for the workspace as planted, or a failure. */
function settingsError(t: import('ava').ExecutionContext, workspace: string, home: string): Error {
  const error = t.throws(() => loadSettings({ workspace, homeDir: home }));
  t.true(isToolcellError(error) && error.code === 'invalid_settings', String(error));
  t.false(error!.message.includes('settings-secret'), `the file's content was printed: ${error!.message}`);
  return error!;
}

test('a FIFO as the settings file fails at once instead of waiting for a writer', (t) => {
  const { workspace, home } = folders(t);
  execFileSync('mkfifo', [join(workspace, '.toolcell', 'settings.json')]);
  t.regex(settingsError(t, workspace, home).message, /settings\.json: it is not a regular file/);
});

test('links to /dev/zero or to a host file are refused without reading them', (t) => {
  const { workspace, home, outside } = folders(t);
  for (const target of ['/dev/zero', join(outside, 'shadow')]) {
    rmSync(join(workspace, '.toolcell', 'settings.json'), { force: true });
    symlinkSync(target, join(workspace, '.toolcell', 'settings.json'));
    t.regex(settingsError(t, workspace, home).message, /settings\.json: it is a symbolic link or lies under one/, target);
  }
});

test('a .toolcell folder that is a link is refused too', (t) => {
  const { workspace, home, outside } = folders(t);
  rmSync(join(workspace, '.toolcell'), { recursive: true });
  writeFileSync(join(outside, 'settings.json'), '{}');
  symlinkSync(outside, join(workspace, '.toolcell'));
  t.regex(settingsError(t, workspace, home).message, /it is a symbolic link or lies under one/);
});

test('a settings file larger than the bound is refused', (t) => {
  const { workspace, home } = folders(t);
  writeFileSync(join(workspace, '.toolcell', 'settings.json'), `{"x":"${'a'.repeat(MAX_SETTINGS_BYTES)}"}`);
  t.regex(settingsError(t, workspace, home).message, /settings files are at most/);
});

test('malformed JSON is reported by line and column, never by quoting the text', (t) => {
  const { workspace, home } = folders(t);
  writeFileSync(join(workspace, '.toolcell', 'settings.json'), `{\n  "a": ${SECRET}\n}\n`);
  const unquoted = settingsError(t, workspace, home).message;
  t.regex(
    unquoted,
    /settings\.json is not valid JSON \(line 2, column 8: this is not a JSON value \(strings need double quotes; true, false and null are lower case\)\)\.$/,
  );
  t.false(unquoted.includes(SECRET));
  writeFileSync(join(workspace, '.toolcell', 'settings.json'), '{\n  "shell": {}\n');
  t.regex(settingsError(t, workspace, home).message, /is not valid JSON \(line 3, column 1: a closing \} is expected\)\.$/);
  // Node 20's message for these has no position at all.
  for (const [text, where] of [
    ['{\n  "shell": {},\n}\n', 'line 3, column 1: a property name in double quotes is expected'],
    ['{\n  "a": 1\n  "b": 2\n}', 'line 3, column 3: a comma is expected'],
    ['{"a": }', 'line 1, column 7: a value is expected'],
    ['// mine\n{}', 'line 1, column 1: comments are not JSON'],
  ] as const) {
    writeFileSync(join(workspace, '.toolcell', 'settings.json'), text);
    t.true(settingsError(t, workspace, home).message.endsWith(`is not valid JSON (${where}).`), text);
  }
});

test("the user's own settings file may be a link (dotfiles), and a missing one is no error", (t) => {
  const { home, outside } = folders(t);
  writeFileSync(join(outside, 'mine.json'), '{"shell":{"liveUpdateIntervalMs":500}}');
  mkdirSync(join(home, '.toolcell'));
  symlinkSync(join(outside, 'mine.json'), join(home, '.toolcell', 'settings.json'));
  t.is(readSettingsText(join(home, '.toolcell', 'settings.json'), 'user'), '{"shell":{"liveUpdateIntervalMs":500}}');
  t.is(readSettingsText(join(home, 'nowhere.json'), 'user'), undefined);
});
