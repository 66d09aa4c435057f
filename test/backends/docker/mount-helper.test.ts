/**
 * The long-lived helper that runs mount(8) for toolcell: one process for
 * every mount, answers routed to their callers, refused request lines, and a
 * helper that dies failing only what it had not answered. Serial: each test
 * counts this process's children.
 */
import test from 'ava';
import { mkdtemp, mkdir, open, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MountHelper } from '../../../src/backends/docker/mount-helper.js';

const isRoot = process.getuid?.() === 0;

/** This process's children's pids (every thread's). */
async function childPids(): Promise<number[]> {
  const tasks = await readdir(`/proc/${process.pid}/task`);
  const lists = await Promise.all(tasks.map((task) => readFile(`/proc/${process.pid}/task/${task}/children`, 'utf8').catch(() => '')));
  return lists.flatMap((text) => text.split(/\s+/).filter(Boolean).map(Number));
}

/** A source folder (a marker inside), open; `count` empty targets; a helper: all removed after the test. */
async function setUp(t: import('ava').ExecutionContext, count: number): Promise<{ source: string; fd: number; targets: string[]; helper: MountHelper }> {
  const root = await mkdtemp(join(tmpdir(), 'toolcell-mount-helper-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const source = join(root, 'source');
  await mkdir(source);
  await writeFile(join(source, 'marker'), 'the checked folder\n');
  const targets = Array.from({ length: count }, (_, i) => join(root, `target-${i}`));
  await Promise.all(targets.map((target) => mkdir(target)));
  const folder = await open(source, 'r');
  t.teardown(() => folder.close());
  const helper = new MountHelper();
  t.teardown(() => helper.close());
  return { source, fd: folder.fd, targets, helper };
}

test.serial('every mount goes through one helper process, and each caller gets its own answer', async (t) => {
  if (!isRoot) return t.pass('mounts need root');
  const { fd, targets, helper } = await setUp(t, 12);
  const before = new Set(await childPids());
  await Promise.all(targets.map((target) => helper.bindDescriptor(fd, target)));
  const started = (await childPids()).filter((pid) => !before.has(pid));
  t.is(started.length, 1, `one helper for 12 mounts, not a child each: ${started.join(' ')}`);
  for (const target of targets) t.is(await readFile(join(target, 'marker'), 'utf8'), 'the checked folder\n');
  await Promise.all(targets.map((target) => helper.detach(target)));
  for (const target of targets) t.deepEqual(await readdir(target), [], 'detached');
});

test.serial("a failing mount answers its caller with mount's reason, and the next request still works", async (t) => {
  if (!isRoot) return t.pass('mounts need root');
  const { source, fd, targets, helper } = await setUp(t, 1);
  const error = await t.throwsAsync(helper.bindDescriptor(fd, join(source, 'no-such-folder')));
  t.regex(error?.message ?? '', /\S/, 'a reason');
  await helper.bindDescriptor(fd, targets[0]!);
  t.is(await readFile(join(targets[0]!, 'marker'), 'utf8'), 'the checked folder\n');
  await helper.detach(targets[0]!);
});

test.serial('request lines cannot be forged: paths with spaces, newlines or quotes, and bad descriptors, are refused before anything runs', async (t) => {
  const helper = new MountHelper();
  t.teardown(() => helper.close());
  const before = new Set(await childPids());
  for (const path of ['/tmp/a b', '/tmp/a\n1 detach /', "/tmp/a'b", 'relative', '/tmp/a\tb', '/tmp/$(id)'])
    await t.throwsAsync(helper.detach(path), { message: /refusing the path/ }, JSON.stringify(path));
  await t.throwsAsync(helper.bindDescriptor(-1, '/tmp/x'), { message: /not an open descriptor/ });
  t.deepEqual(
    (await childPids()).filter((pid) => !before.has(pid)),
    [],
    'no helper was even started',
  );
});

test.serial('a helper that dies fails what it had not answered, and the next request starts a new one', async (t) => {
  if (!isRoot) return t.pass('mounts need root');
  const { fd, targets, helper } = await setUp(t, 1);
  const before = new Set(await childPids());
  await helper.bindDescriptor(fd, targets[0]!);
  await helper.detach(targets[0]!);
  const [first] = (await childPids()).filter((pid) => !before.has(pid));
  t.truthy(first);
  process.kill(first!, 'SIGKILL');
  // Whether this request reached the dead helper or a new one, it ends: an answer or the reason.
  await helper.bindDescriptor(fd, targets[0]!).then(
    () => helper.detach(targets[0]!),
    (error: Error) => t.regex(error.message, /mount helper: exited/),
  );
  await helper.bindDescriptor(fd, targets[0]!);
  t.is(await readFile(join(targets[0]!, 'marker'), 'utf8'), 'the checked folder\n', 'a new helper mounted it');
  await helper.detach(targets[0]!);
});
