/**
 * The Judge0 class (CVE-2024-28185/28189): sandboxed code plants a symlink,
 * a hard link or a FIFO in the workspace, and a host-side component later
 * follows it with the host's rights. Here the planting is done by a real
 * sandboxed command, and the host side is toolcell's own file tools running
 * in the real worker pool (read_file, write_file, replace, list_directory,
 * glob, grep_search, read_many_files) and the scheduler's saving of long
 * outputs. They must refuse, and nothing outside the workspace may change or
 * leak.
 */
import anyTest from 'ava';
import { lstat, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { SandboxSession, makeTempDir, nonce, type CallOutcome } from '../helpers/security.js';

const docker = await requireDocker(anyTest, 'security/links');
const test = docker.serial;

let session: SandboxSession;
/** A host folder outside the workspace, with a secret file and a file the attacks try to overwrite. */
let outside: string;
const SECRET = nonce('outside-secret');
const VICTIM = nonce('victim-original');

docker.before(async () => {
  session = await SandboxSession.open({ timeoutSeconds: 20 });
  outside = join(session.workspace, '..', `${session.workspace.split('/').pop()}-outside`);
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), `${SECRET}\n`);
  await writeFile(join(outside, 'victim.txt'), `${VICTIM}\n`);
});
docker.after.always(async () => {
  await session?.close();
  if (outside) await rm(outside, { recursive: true, force: true });
});

/** Plants links with a sandboxed command (the only writer the attack controls). */
async function plant(t: import('ava').ExecutionContext, script: string): Promise<void> {
  const outcome = await session.shell(`set -e; ${script}; echo planted`);
  t.true(outcome.output.includes('planted'), `planting failed: ${outcome.output}`);
}

/** Nothing outside changed: the same two files, the same content. */
async function assertOutsideUntouched(t: import('ava').ExecutionContext): Promise<void> {
  t.deepEqual((await readdir(outside)).sort(), ['secret.txt', 'victim.txt']);
  t.is(await readFile(join(outside, 'victim.txt'), 'utf8'), `${VICTIM}\n`);
  t.is(await readFile(join(outside, 'secret.txt'), 'utf8'), `${SECRET}\n`);
}

function assertRefused(t: import('ava').ExecutionContext, outcome: CallOutcome, label: string): void {
  t.is(outcome.status, 'error', `${label} must be refused: ${outcome.output.slice(0, 300)}`);
  t.false(outcome.output.includes(SECRET), `${label}: the secret leaked`);
  t.false(outcome.display.includes(SECRET), `${label}: the secret leaked to the display`);
}

test('read_file refuses a planted symlink to a host file (absolute and ../ targets)', async (t) => {
  await plant(t, `ln -sfn ${outside}/secret.txt abs-link; ln -sfn ../${outside.split('/').pop()}/secret.txt rel-link; ln -sfn /etc/shadow shadow-link`);
  assertRefused(t, await session.tool('read_file', { file_path: 'abs-link' }), 'absolute symlink');
  assertRefused(t, await session.tool('read_file', { file_path: 'rel-link' }), 'relative symlink');
  const shadow = await session.tool('read_file', { file_path: 'shadow-link' });
  t.is(shadow.status, 'error');
  t.notRegex(shadow.output, /root:[^:]*:\d+/, "the host's /etc/shadow must not be read");
  await assertOutsideUntouched(t);
  await session.assertAlive(t);
});

test('write_file refuses a planted symlink (existing and dangling targets) and writes nothing outside', async (t) => {
  await plant(t, `ln -sfn ${outside}/victim.txt w-link; ln -sfn ${outside}/created-by-attack.txt dangling-link`);
  assertRefused(t, await session.tool('write_file', { file_path: 'w-link', content: 'PWNED' }), 'write through symlink');
  assertRefused(t, await session.tool('write_file', { file_path: 'dangling-link', content: 'PWNED' }), 'write through dangling symlink');
  await assertOutsideUntouched(t);
  await session.assertAlive(t);
});

test('replace refuses a planted symlink and changes nothing outside', async (t) => {
  await plant(t, `ln -sfn ${outside}/victim.txt r-link`);
  assertRefused(t, await session.tool('replace', { file_path: 'r-link', old_string: VICTIM, new_string: 'PWNED' }), 'replace through symlink');
  await assertOutsideUntouched(t);
  await session.assertAlive(t);
});

test('a symlinked directory leading out is refused by every file tool', async (t) => {
  await plant(t, `ln -sfn ${outside} out-dir`);
  assertRefused(t, await session.tool('read_file', { file_path: 'out-dir/secret.txt' }), 'read through dir link');
  assertRefused(t, await session.tool('write_file', { file_path: 'out-dir/new.txt', content: 'PWNED' }), 'write through dir link');
  assertRefused(t, await session.tool('replace', { file_path: 'out-dir/victim.txt', old_string: VICTIM, new_string: 'x' }), 'replace through dir link');
  const listing = await session.tool('list_directory', { dir_path: 'out-dir' });
  t.false(listing.output.includes('secret.txt'), `list_directory listed the outside folder: ${listing.output}`);
  const globbed = await session.tool('glob', { pattern: '**/*.txt' });
  t.false(globbed.output.includes('secret.txt'), `glob followed the link: ${globbed.output}`);
  // A regex for the secret, so the tool's "no matches for <pattern>" message cannot contain it.
  const grepped = await session.tool('grep_search', { pattern: 'outside-secret-[0-9a-f]{16}' });
  t.false(grepped.output.includes(SECRET), `grep_search followed the link: ${grepped.output}`);
  const many = await session.tool('read_many_files', { include: ['out-dir/**', '**/*.txt'] });
  t.false(many.output.includes(SECRET), 'read_many_files followed the link');
  await assertOutsideUntouched(t);
  await session.assertAlive(t);
});

test('hard links out of the workspace cannot be planted (the workspace is its own mount)', async (t) => {
  const outcome = await session.shell('ln /etc/passwd pw-hard; echo "etc=$?"; echo x > /tmp/h; ln /tmp/h tmp-hard; echo "tmp=$?"; ls pw-hard tmp-hard 2>&1');
  t.regex(outcome.output, /etc=1/);
  t.regex(outcome.output, /tmp=1/);
  t.regex(outcome.output, /Invalid cross-device link/);
  await plant(t, 'echo inside > hard-a; ln -f hard-a hard-b');
  const written = await session.tool('write_file', { file_path: 'hard-b', content: 'new content' });
  t.not(written.status, 'cancelled');
  await assertOutsideUntouched(t);
  await session.assertAlive(t);
});

test('a FIFO or a link to a device planted as a file does not hang or feed the host tools', async (t) => {
  await plant(t, 'rm -f fifo; mkfifo fifo; ln -sfn /dev/zero zero-link; ln -sfn /proc/self/environ env-link');
  const fifo = await session.tool('read_file', { file_path: 'fifo' });
  t.is(fifo.status, 'error', fifo.output);
  assertRefused(t, await session.tool('read_file', { file_path: 'zero-link' }), 'link to /dev/zero');
  const env = await session.tool('read_file', { file_path: 'env-link' });
  t.is(env.status, 'error');
  t.false(env.output.includes('PATH='), "the host process's environment must not be read");
  const grep = await session.tool('grep_search', { pattern: 'x' });
  t.not(grep.status, 'cancelled');
  await session.assertAlive(t);
});

test('a symlink loop gives an error, not a crash', async (t) => {
  await plant(t, 'ln -sfn loop-a loop-b; ln -sfn loop-b loop-a');
  const outcome = await session.tool('read_file', { file_path: 'loop-a' });
  t.is(outcome.status, 'error');
  const write = await session.tool('write_file', { file_path: 'loop-a/x', content: 'x' });
  t.is(write.status, 'error');
  await session.assertAlive(t);
});

test('a symlink swapped in and out while host tools run (TOCTOU race) never lets a read or write out', async (t) => {
  await plant(t, `mkdir -p race-real && echo inside > race-real/victim.txt && cp race-real/victim.txt race-real/secret.txt`);
  const started = await session.shell(
    `rm -f stop-race; while [ ! -e stop-race ]; do ln -sfn ${outside} race.tmp && mv -T race.tmp race; ln -sfn race-real race.tmp && mv -T race.tmp race; done`,
    { background: true },
  );
  t.is(started.status, 'success', started.output);
  let leaks = 0;
  for (let round = 0; round < 40; round++) {
    const [read, write, replaced] = await session.batch([
      { name: 'read_file', args: { file_path: 'race/secret.txt' } },
      { name: 'write_file', args: { file_path: 'race/victim.txt', content: `round ${round}\n` } },
      { name: 'replace', args: { file_path: 'race/victim.txt', old_string: 'round', new_string: 'ROUND', allow_multiple: true } },
    ]);
    if (read?.text.includes(SECRET)) leaks++;
    t.not(write?.status, undefined);
    t.not(replaced?.status, undefined);
  }
  await session.shell('touch stop-race; sleep 0.5; rm -f race race.tmp stop-race');
  t.is(leaks, 0, 'a read went through the swapped-in link');
  await assertOutsideUntouched(t);
  await session.assertAlive(t);
});

test('a folder and a symlink exchanged in a loop (renameat2 RENAME_EXCHANGE) never let any file tool read, list or search outside', async (t) => {
  // The folder holds only `inside-only.txt`: `secret.txt` or `victim.txt` in any answer was listed outside.
  await plant(t, `rm -rf xrace xrace-swap; mkdir xrace && echo inside > xrace/inside-only.txt && ln -s ${outside} xrace-swap`);
  const swapper = [
    'import ctypes, os',
    'libc = ctypes.CDLL(None, use_errno=True)',
    "while not os.path.exists('stop-xrace'):",
    "    libc.renameat2(-100, b'xrace', -100, b'xrace-swap', 2)",
  ].join('\n');
  const started = await session.shell(`rm -f stop-xrace; python3 -c "${swapper}"`, { background: true });
  t.is(started.status, 'success', started.output);
  const leaked: string[] = [];
  const secretName = /\b(secret|victim)\.txt\b/;
  for (let round = 0; round < 40; round++) {
    const outcomes = await session.batch([
      { name: 'read_file', args: { file_path: 'xrace/inside-only.txt' } },
      { name: 'grep_search', args: { pattern: 'outside-secret', dir_path: 'xrace' } },
      { name: 'grep_search', args: { pattern: 'outside-secret', include_pattern: 'xrace/**' } },
      { name: 'glob', args: { pattern: 'xrace/*' } },
      { name: 'list_directory', args: { dir_path: 'xrace' } },
      { name: 'read_many_files', args: { include: ['xrace/*'] } },
      { name: 'write_file', args: { file_path: 'xrace/inside-only.txt', content: `round ${round}\n` } },
      { name: 'replace', args: { file_path: 'xrace/inside-only.txt', old_string: 'round', new_string: 'ROUND', allow_multiple: true } },
    ]);
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.text.includes(SECRET) || outcome.display.includes(SECRET) || secretName.test(outcome.text))
        leaked.push(`round ${round}, call ${index}: ${outcome.text.slice(0, 200)}`);
    }
  }
  await session.shell('touch stop-xrace; sleep 0.5; rm -rf xrace xrace-swap stop-xrace');
  t.deepEqual(leaked, [], 'a file tool read, listed or searched the host folder swapped in');
  await assertOutsideUntouched(t);
  await session.assertAlive(t);
});

test('a FIFO named .gitignore, and FIFOs among the files, do not hang grep_search or glob', async (t) => {
  await plant(
    t,
    'rm -rf fifo-tree; mkdir -p fifo-tree/sub && echo needle > fifo-tree/sub/a.txt && mkfifo fifo-tree/.gitignore fifo-tree/sub/.gitignore fifo-tree/sub/pipe.txt',
  );
  const grep = await session.tool('grep_search', { pattern: 'needle', dir_path: 'fifo-tree' });
  t.is(grep.status, 'success', grep.output);
  t.regex(grep.text, /File: sub\/a\.txt\nL1: needle/);
  const glob = await session.tool('glob', { pattern: 'fifo-tree/**/*.txt' });
  t.not(glob.status, 'cancelled');
  await plant(t, 'rm -rf fifo-tree');
  await session.assertAlive(t);
});

test("the state folder's subfolders (.toolcell/tool-outputs, settings) cannot be replaced by a symlink; saved outputs stay inside", async (t) => {
  const target = await makeTempDir(t, 'toolcell-sec-outputs-');
  const attempt = await session.shell(
    `rm -rf .toolcell/tool-outputs; ln -sfn ${target} .toolcell/tool-outputs; echo "link=$?"; ln -sfn ${target}/settings.json .toolcell/settings.json; echo "settings=$?"; ls -la .toolcell`,
  );
  t.notRegex(attempt.output, /link=0\b/, 'the state folder must not be writable from the sandbox');
  t.notRegex(attempt.output, /settings=0\b/);
  const flood = await session.shell(`echo ${nonce('flood')}; yes injected-line | head -c 2M`);
  t.not(flood.status, 'cancelled');
  t.deepEqual(await readdir(target), [], 'nothing was written through a planted link');
  const saved = await readdir(join(session.workspace, '.toolcell', 'tool-outputs')).catch(() => [] as string[]);
  t.true(saved.length > 0, 'the full output was saved inside the workspace state folder');
  t.false((await lstat(join(session.workspace, '.toolcell', 'tool-outputs'))).isSymbolicLink());
  await session.assertAlive(t);
});

test('the state folder itself (.toolcell) cannot be swapped for a symlink leading out (save_memory, saved outputs)', async (t) => {
  const target = await makeTempDir(t, 'toolcell-sec-state-');
  const attempt = await session.shell(`mv .toolcell .toolcell-moved; echo "mv=$?"; rm -rf .toolcell; ln -sfn ${target} .toolcell; echo "ln=$?"`);
  t.notRegex(attempt.output, /mv=0\b/);
  const memory = await session.tool('save_memory', { fact: `remember ${nonce('fact')}` });
  t.not(memory.status, 'cancelled');
  await session.shell('yes another-flood | head -c 2M');
  t.deepEqual(await readdir(target), [], 'nothing may be written outside the workspace');
  t.false((await lstat(join(session.workspace, '.toolcell'))).isSymbolicLink());
  await session.assertAlive(t);
});

test('symlinks planted in the background-log folder (the one writable part of .toolcell) lead nowhere', async (t) => {
  const target = await makeTempDir(t, 'toolcell-sec-bg-');
  await writeFile(join(target, 'secret.log'), `${SECRET}\n`);
  await plant(t, `ln -sfn ${target}/secret.log .toolcell/background/planted.log; ln -sfn ${target} .toolcell/background/dir`);
  assertRefused(t, await session.tool('read_file', { file_path: '.toolcell/background/planted.log' }), 'read of a planted log link');
  const job = await session.shell('echo bg-output', { background: true });
  t.is(job.status, 'success', job.output);
  t.deepEqual((await readdir(target)).sort(), ['secret.log'], 'a background log was not created through a link');
  await session.assertAlive(t);
});

test('a huge and very deep tree planted in the workspace keeps host-side search tools bounded and working', async (t) => {
  await plant(
    t,
    `mkdir -p wide && cd wide && seq 1 20000 | xargs touch && cd .. && python3 -c 'import os
os.makedirs("deep", exist_ok=True)
os.chdir("deep")
for i in range(600):
    os.mkdir("d"); os.chdir("d")
open("bottom.txt", "w").write("needle-at-the-bottom")'`,
  );
  for (const [name, args] of [
    ['glob', { pattern: '**/*' }],
    ['list_directory', { dir_path: 'wide' }],
    ['grep_search', { pattern: 'needle-at-the-bottom' }],
    ['read_many_files', { include: ['**/*.txt'] }],
  ] as const) {
    const outcome = await session.tool(name, args);
    t.not(outcome.status, 'cancelled', name);
    t.true(outcome.text.length <= 45_000, `${name} handed the model ${outcome.text.length} characters`);
    t.notRegex(outcome.text, /worker_crashed|worker_out_of_memory/, `${name}: ${outcome.text.slice(0, 200)}`);
  }
  await session.shell('rm -rf wide deep');
  await assertOutsideUntouched(t);
  await session.assertAlive(t);
});

test('host-side tools on attacker-sized files (a 900 MB file, a sparse 1 GiB file) stay within their read limits', async (t) => {
  await plant(t, "head -c 900M /dev/zero | tr '\\0' a > big.txt && truncate -s 1G sparse.txt");
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const outcomes = await session.batch([
    { name: 'read_file', args: { file_path: 'big.txt' } },
    { name: 'read_file', args: { file_path: 'sparse.txt' } },
    { name: 'read_many_files', args: { include: ['*.txt'] } },
    { name: 'grep_search', args: { pattern: 'aaaa' } },
  ]);
  clearInterval(sampler);
  await session.shell('rm -f big.txt sparse.txt');
  for (const outcome of outcomes) t.true(outcome.text.length <= 45_000, `a tool handed the model ${outcome.text.length} characters`);
  t.true(peak - before < 512 * 1024 * 1024, `the host's resident memory grew by ${Math.round((peak - before) / 1048576)} MB`);
  await session.assertAlive(t);
});
