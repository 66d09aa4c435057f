/**
 * Secrets in a real Docker sandbox: each command gets the value in its
 * environment, and whatever it does to print it back (plainly, on stderr,
 * in pieces, split by an escape sequence or a line wrap, across the cut of
 * a long output, encoded as base64, hex, JSON or a URL) never leaves the
 * shell thread: not in the result, the live output, the saved output file
 * or its excerpt.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ShellService } from '../../src/shell/shell-service.js';
import type { ShellSessionHandle } from '../../src/shell/session-handle.js';
import { secretVariants } from '../../src/secrets/secret-variants.js';
import { makeWorkspace, requireDocker } from '../helpers/docker.js';

const test = await requireDocker(anyTest, 'secrets/sandbox');

/** Has a quote, a slash, a plus and an equals sign, so that its JSON, URL and base64 forms all differ from it. */
const VALUE = 'tok"en+/=S3cret_42-zq';
const SHA = createHash('sha256').update(VALUE).digest('hex');

let service: ShellService | undefined;
test.before(async () => {
  // A small character budget: the head and tail cut falls inside the output of one test.
  service = await ShellService.create({ liveUpdateIntervalMs: 0, maxOutputChars: 4000 });
});
test.after.always(async () => {
  await service?.close();
});

async function session(t: ExecutionContext): Promise<{ session: ShellSessionHandle; workspace: string }> {
  const workspace = await makeWorkspace(t, 'toolcell-secrets-');
  const opened = await service!.openSession({ sandbox: 'docker', workspaceRoot: workspace, secrets: { API_TOKEN: VALUE } });
  t.teardown(() => opened.close());
  return { session: opened, workspace };
}

/** No encoded form of the value, nor any 10-character piece of one, is in `text`. */
function assertClean(t: ExecutionContext, text: string, label: string): void {
  t.false(text.includes(VALUE), `${label}: the value itself`);
  for (const variant of secretVariants(VALUE)) {
    for (let i = 0; i + 10 <= variant.length; i++) {
      if (text.includes(variant.slice(i, i + 10))) t.fail(`${label}: a piece of ${variant} in ${JSON.stringify(text.slice(0, 400))}`);
    }
  }
}

test('the command gets the value in its environment', async (t) => {
  const { session: shell } = await session(t);
  const result = await shell.run({ command: 'printf %s "$API_TOKEN" | sha256sum' });
  t.regex(result.output, new RegExp(SHA));
});

test('printed back in every way tried, it is redacted in the result and the live output', async (t) => {
  const { session: shell } = await session(t);
  const attempts: Record<string, string> = {
    plain: 'echo "$API_TOKEN"',
    env: 'env | grep API_TOKEN',
    stderr: 'echo "$API_TOKEN" >&2',
    'in pieces over time': 'printf %s "${API_TOKEN:0:6}"; sleep 0.3; printf "%s\\n" "${API_TOKEN:6}"',
    'split by a colour': 'printf "%s\\033[31m%s\\033[0m\\n" "${API_TOKEN:0:6}" "${API_TOKEN:6}"',
    'wrapped by the terminal': 'printf "%0110d%s\\n" 0 "$API_TOKEN"',
    base64: 'printf %s "$API_TOKEN" | base64; echo "$API_TOKEN" | base64 -w0; echo; printf "x%s" "$API_TOKEN" | base64',
    'basic auth': 'printf "user:%s" "$API_TOKEN" | base64',
    hex: `python3 -c 'import os; print(os.environ["API_TOKEN"].encode().hex()); print(os.environ["API_TOKEN"].encode().hex().upper())'`,
    json: `python3 -c 'import os, json; print(json.dumps({"t": os.environ["API_TOKEN"]}))'`,
    url: `python3 -c 'import os, urllib.parse; print(urllib.parse.quote(os.environ["API_TOKEN"], safe=""))'`,
  };
  for (const [label, command] of Object.entries(attempts)) {
    const live: string[] = [];
    const result = await shell.run({ command, onOutput: (output) => typeof output === 'string' && live.push(output) });
    t.regex(result.output, /\[REDACTED:API_TOKEN\]/, `${label}: ${result.output}`);
    assertClean(t, result.output, label);
    assertClean(t, live.join('\n'), `${label} (live)`);
  }
  const piped = await shell.run({ command: 'echo "out $API_TOKEN"; echo "err $API_TOKEN" >&2', mode: 'pipes' });
  t.is(piped.stdout, 'out [REDACTED:API_TOKEN]\n');
  t.is(piped.stderr, 'err [REDACTED:API_TOKEN]\n');
});

test('at the cut of a long output and in the saved output file, it is redacted too', async (t) => {
  const { session: shell, workspace } = await session(t);
  const path = join(workspace, '.toolcell', 'tool-outputs', 'long.txt');
  // Each line carries the value, so one falls on the cut between the head and tail kept.
  const result = await shell.run({
    command: 'for i in $(seq 1 400); do echo "line $i $API_TOKEN"; done',
    saveOutput: { path, afterChars: 100 },
  });
  t.true(result.truncated);
  assertClean(t, result.output, 'output');
  assertClean(t, result.savedOutput?.excerpt ?? '', 'excerpt');
  const saved = readFileSync(path, 'utf8');
  t.is(saved.split('\n').filter((line) => line.endsWith(' [REDACTED:API_TOKEN]')).length, 400);
  assertClean(t, saved, 'saved file');
});

test('bad secrets are refused naming the secret, never quoting a value', async (t) => {
  const workspace = await makeWorkspace(t, 'toolcell-secrets-');
  for (const [secrets, message] of [
    [{ 'BAD-NAME': 'long enough value' }, /secrets\.BAD-NAME.*must be an environment variable name/],
    [{ PATH: 'long enough value' }, /secrets\.PATH.*is set by toolcell/],
    [{ SHORT: 'abc' }, /secrets\.SHORT.*is shorter than 8 characters/],
  ] as const) {
    const error = await t.throwsAsync(service!.openSession({ sandbox: 'docker', workspaceRoot: workspace, secrets }), { instanceOf: TypeError });
    t.regex(error!.message, message);
    t.false(error!.message.includes('long enough value') || error!.message.includes('abc'));
  }
});
