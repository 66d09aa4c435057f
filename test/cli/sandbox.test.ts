/**
 * `toolcell sandbox build|status|clean`, run as a user would.
 */
import anyTest from 'ava';
import { sandboxImageTag } from '../../src/backends/docker/image.js';
import { runCli } from '../helpers/cli.js';
import { requireDocker } from '../helpers/docker.js';

const test = await requireDocker(anyTest, 'sandbox/cli');

for (const command of ['setup', 'build', 'status', 'clean']) {
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

test('sandbox build is idempotent, prints the tag, and ends its progress with the size and tag', async (t) => {
  const result = await runCli(['sandbox', 'build']);
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout.trim(), sandboxImageTag());
  t.regex(result.stderr, /^\[\d+:\d\d\] building toolcell-sandbox:/m, 'phases carry the elapsed time');
  t.regex(result.stderr, /^\[\d+:\d\d\] step 1\/\d+: /m, 'each Dockerfile step is named');
  const last = result.stderr.trim().split('\n').at(-1) ?? '';
  t.regex(last, new RegExp(`built ${sandboxImageTag().replace(/[.:]/g, '\\$&')}, \\d+ MB, in \\d`), 'the last line gives the tag and size');
  // eslint-disable-next-line no-control-regex -- looking for escape bytes is the point.
  t.notRegex(result.stderr, /\x1b\[/, 'no cursor movement when stderr is not a terminal');
});

test("sandbox status reports the engine and the docker client, whose API negotiated down to the engine's", async (t) => {
  const result = await runCli(['sandbox', 'status', '--json']);
  t.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as {
    engine: { version: string; apiVersion: string; minApiVersion: string };
    client: { found: boolean; version?: string; apiVersion?: string; defaultApiVersion?: string };
  };
  t.regex(report.engine.version, /^\d+\.\d+/);
  t.regex(report.engine.apiVersion, /^1\.\d+$/);
  t.regex(report.engine.minApiVersion, /^1\.\d+$/);
  // Every machine of this project's kind has a docker client on PATH (28.x beside the 20.10 engine).
  t.true(report.client.found, 'a docker client is on PATH');
  t.is(report.client.apiVersion, report.engine.apiVersion, "the client speaks the engine's API (negotiated down when newer)");
  const text = await runCli(['sandbox', 'status']);
  t.regex(text.stdout, /^engine: +answers at .* \(Docker \S+, API 1\.\d+; accepts API 1\.\d+ and later\)$/m);
  t.regex(text.stdout, /^client: +docker \S+ \(API 1\.\d+/m);
});

test('sandbox setup with an engine that answers and the image built: installs nothing, reports ready', async (t) => {
  const result = await runCli(['sandbox', 'setup']);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, /setup-engine: the Docker engine answers/);
  t.notRegex(result.stderr, /installing|starting dockerd/);
  t.regex(result.stderr, /the sandbox image toolcell-sandbox:\w+ is present/);
  t.regex(result.stdout, /ready:\s+yes/);
});

test('sandbox clean --json reports what it removed', async (t) => {
  const result = await runCli(['sandbox', 'clean', '--json']);
  t.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { removed: string[]; kept: number };
  t.true(Array.isArray(report.removed));
  t.is(typeof report.kept, 'number');
});
