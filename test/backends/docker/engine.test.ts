/**
 * A dead or absent engine, or a missing image, gives a clear error with a
 * stable code, and `probeDocker` fails closed.
 */
import anyTest from 'ava';
import { ToolErrorType } from '../../../src/errors.js';
import { createDockerBackend, probeDocker } from '../../../src/backends/docker/docker-backend.js';
import { buildSandboxImage } from '../../../src/backends/docker/build.js';
import { ensureSandboxImage } from '../../../src/backends/docker/ensure-image.js';
import { requireDocker } from '../../helpers/docker.js';

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
