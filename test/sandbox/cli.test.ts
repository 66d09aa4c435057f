/**
 * `toolcell sandbox build|status|clean`, run as a user would.
 */
import anyTest from 'ava';
import { sandboxImageTag } from '../../src/sandbox/image.js';
import { runCli } from '../helpers/cli.js';
import { requireDocker } from '../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/cli');

for (const command of ['build', 'status', 'clean']) {
  anyTest(`sandbox ${command} --help describes the command`, async (t) => {
    const result = await runCli(['sandbox', command, '--help']);
    t.is(result.code, 0);
    t.regex(result.stdout, new RegExp(`Usage: toolcell sandbox ${command}`));
  });
}

anyTest('sandbox build refuses --offline together with --base (usage error, exit 2)', async (t) => {
  const result = await runCli(['sandbox', 'build', '--offline', '--base', 'debian:bookworm-slim']);
  t.is(result.code, 2);
  t.regex(result.stderr, /--offline and --base exclude each other/);
});

anyTest('sandbox status with no engine: not ready, exit 1, says why', async (t) => {
  const result = await runCli(['sandbox', 'status', '--json', '--socket', '/nonexistent/docker.sock']);
  t.is(result.code, 1);
  const report = JSON.parse(result.stdout) as { ready: boolean; engine: { available: boolean; reason: string } };
  t.false(report.ready);
  t.false(report.engine.available);
  t.regex(report.engine.reason, /ENOENT/);
});

anyTest('sandbox clean with no engine: exit 1 with sandbox_unavailable', async (t) => {
  const result = await runCli(['sandbox', 'clean', '--socket', '/nonexistent/docker.sock']);
  t.is(result.code, 1);
  t.regex(result.stderr, /sandbox_unavailable/);
});

test('sandbox status: ready, with the image of this recipe', async (t) => {
  const result = await runCli(['sandbox', 'status', '--json']);
  t.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { ready: boolean; image: { expected: string; present: boolean } };
  t.true(report.ready);
  t.is(report.image.expected, sandboxImageTag());
  t.true(report.image.present);
  const text = await runCli(['sandbox', 'status']);
  t.regex(text.stdout, /ready:\s+yes/);
});

test('sandbox build is idempotent and prints the tag', async (t) => {
  const result = await runCli(['sandbox', 'build']);
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout.trim(), sandboxImageTag());
  t.regex(result.stderr, /building toolcell-sandbox:/);
});

test('sandbox clean --json reports what it removed', async (t) => {
  const result = await runCli(['sandbox', 'clean', '--json']);
  t.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { removed: string[]; kept: number };
  t.true(Array.isArray(report.removed));
  t.is(typeof report.kept, 'number');
});
