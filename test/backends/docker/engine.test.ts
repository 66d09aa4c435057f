/**
 * A dead or absent engine, or a missing image, gives a clear error with a
 * stable code, and `probeDocker` fails closed.
 */
import anyTest from 'ava';
import { ToolErrorType } from '../../../src/errors.js';
import { createDockerBackend, probeDocker } from '../../../src/backends/docker/docker-backend.js';
import { buildSandboxImage } from '../../../src/backends/docker/build.js';
import { ensureSandboxImage } from '../../../src/backends/docker/ensure-image.js';
import { awaitEngine } from '../../../src/backends/docker/probe.js';
import { requireDocker } from '../../helpers/docker.js';
import { slowEngine } from '../../helpers/slow-engine.js';

// Declared first: ava wants every test declared before the file's first await ends.
const test = await requireDocker(anyTest, 'sandbox/engine');

anyTest('a wrong socket path: createDockerBackend rejects with sandbox_unavailable', async (t) => {
  const error = await t.throwsAsync(createDockerBackend({ socketPath: '/nonexistent/docker.sock' }));
  t.is((error as { code?: string }).code, ToolErrorType.SANDBOX_UNAVAILABLE);
  t.regex(error?.message ?? '', /unix:\/\/\/nonexistent\/docker\.sock/);
  t.regex(error?.message ?? '', /ENOENT/);
  t.regex(error?.message ?? '', /toolcell sandbox status/);
});

anyTest('a wrong socket path: probeDocker answers unavailable with a reason, never throws', async (t) => {
  const probe = await probeDocker({ socketPath: '/nonexistent/docker.sock' });
  t.false(probe.available);
  t.regex(probe.reason ?? '', /ENOENT/);
});

anyTest('bad probe and build options are refused naming the field, before the engine is contacted', async (t) => {
  await t.throwsAsync(probeDocker({ timeoutMs: 0 }), { instanceOf: RangeError, message: 'probeDocker: options.timeoutMs must be at least 1' });
  await t.throwsAsync(buildSandboxImage({ base: 'debian:bookworm-slim', offline: true }), {
    instanceOf: TypeError,
    message: 'buildSandboxImage: options.offline must not be given with options.base (they exclude each other)',
  });
  await t.throwsAsync(buildSandboxImage({ base: '' }), { instanceOf: TypeError, message: 'buildSandboxImage: options.base must not be empty' });
});

anyTest('bad options are refused before the engine is contacted', async (t) => {
  await t.throwsAsync(createDockerBackend({ socketPath: '/nonexistent/docker.sock', limits: { pids: -1 } }), {
    instanceOf: RangeError,
    message: /options\.limits\.pids/,
  });
});

test('the engine answers: probeDocker reports its version', async (t) => {
  const probe = await probeDocker();
  t.true(probe.available);
  t.regex(probe.version ?? '', /\d+\.\d+/);
});

test('a missing image gives sandbox_image_missing with the command to run', async (t) => {
  const error = await t.throwsAsync(createDockerBackend({ image: 'toolcell-sandbox:does-not-exist' }));
  t.is((error as { code?: string }).code, ToolErrorType.SANDBOX_IMAGE_MISSING);
  const message = await t.throwsAsync(ensureSandboxImage({ image: 'toolcell-sandbox:does-not-exist' }));
  t.regex(message?.message ?? '', /does not exist/);
});

test('an unknown runtime is refused at creation, saying how to register it', async (t) => {
  const error = await t.throwsAsync(createDockerBackend({ runtime: 'toolcell-no-such-runtime', warmPool: 0 }));
  t.is((error as { code?: string }).code, ToolErrorType.SANDBOX_UNAVAILABLE);
  t.regex(error?.message ?? '', /no runtime named toolcell-no-such-runtime \(it has: .*runc/);
  t.regex(error?.message ?? '', /daemon\.json/);
});

test('an engine that is there but slow to answer (a loaded host): a backend start waits for it instead of failing', async (t) => {
  // 7 s: longer than one ask (5 s), the way dockerd went silent under CI's load and a hosting server refused to start.
  const engine = await slowEngine({ holdMs: 7000 });
  t.teardown(() => engine.close());
  const said: string[] = [];
  const probe = await awaitEngine({ socketPath: engine.socketPath, onSlow: (reason) => said.push(reason) });
  t.true(probe.available, probe.reason);
  t.is(said.length, 1, 'told once that the engine is slow');
  t.regex(said[0] ?? '', /did not answer within 5000 ms; asking again for up to 60 s/);
  const slower = await slowEngine({ holdMs: 7000 });
  t.teardown(() => slower.close());
  const backend = await createDockerBackend({ socketPath: slower.socketPath, warmPool: 0 });
  await backend.close();
  t.pass('createDockerBackend waited for the slow engine');
});

test('an engine that never answers fails once the patience is spent, saying it did not answer', async (t) => {
  const engine = await slowEngine({ holdMs: Infinity });
  t.teardown(() => engine.close());
  const said: string[] = [];
  const probe = await awaitEngine({ socketPath: engine.socketPath, patienceMs: 6000, onSlow: (reason) => said.push(reason) });
  t.false(probe.available);
  t.true(probe.timedOut);
  t.regex(probe.reason ?? '', /did not answer within/);
  t.is(said.length, 1);
});

anyTest('an absent engine is not waited for: it fails at the first ask, never called slow', async (t) => {
  const said: string[] = [];
  const probe = await awaitEngine({ socketPath: '/nonexistent/docker.sock', onSlow: (reason) => said.push(reason) });
  t.false(probe.available);
  t.falsy(probe.timedOut);
  t.regex(probe.reason ?? '', /ENOENT/);
  t.deepEqual(said, []);
});
