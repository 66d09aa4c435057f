/**
 * A workspace's own sandbox image (.toolcell/sandbox.Dockerfile), through
 * `toolcell exec` and the real engine: built FROM toolcell's image on first
 * use with its progress on stderr, used, named by a hash of the base and the
 * file (rebuilt when either changes); a Dockerfile that sets USER root, an
 * ENTRYPOINT, ENV LD_PRELOAD, a HEALTHCHECK and replaces the supervisor
 * changes nothing of the hardening; a VOLUME is refused; an untrusted
 * workspace's file is never built.
 */
import anyTest, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { customImageTag } from '../../../src/backends/docker/custom-image.js';
import { sandboxImageTag, sandboxRecipeDir } from '../../../src/backends/docker/image.js';
import { runCli } from '../../helpers/cli.js';
import { makeWorkspace, requireDocker } from '../../helpers/docker.js';
import { UNDER_GVISOR } from '../../helpers/test-runtime.js';

const test = (await requireDocker(anyTest, 'sandbox/custom-image')).serial;
const run = promisify(execFile);

async function baseId(): Promise<string> {
  return (await run('docker', ['image', 'inspect', '--format', '{{.Id}}', sandboxImageTag()])).stdout.trim();
}

/** A workspace holding `dockerfile`; the image it names is removed at teardown. */
async function workspaceWith(t: ExecutionContext, dockerfile: string): Promise<{ workspace: string; tag: string }> {
  const workspace = await makeWorkspace(t, 'toolcell-custom-image-');
  await mkdir(join(workspace, '.toolcell'), { recursive: true });
  await writeFile(join(workspace, '.toolcell', 'sandbox.Dockerfile'), dockerfile);
  const tag = customImageTag(await baseId(), dockerfile);
  t.teardown(async () => {
    await run('docker', ['image', 'rm', tag]).catch(() => undefined);
  });
  return { workspace, tag };
}

async function shell(workspace: string, command: string, trust = true) {
  const result = await runCli(['exec', '--workspace', workspace, '--approval', 'yolo', '--json', ...(trust ? ['--trust-workspace'] : [])], {
    input: JSON.stringify([{ name: 'run_shell_command', args: { command } }]),
  });
  const text = JSON.stringify(JSON.parse(result.stdout || '[]'));
  return { ...result, text };
}

test('built FROM toolcell image on first use with progress, used, not rebuilt; a changed file is a new image', async (t) => {
  const marker = `custom-${randomBytes(6).toString('hex')}`;
  const dockerfile = `ARG TOOLCELL_SANDBOX_IMAGE\nFROM \${TOOLCELL_SANDBOX_IMAGE}\nRUN echo ${marker} > /etc/toolcell-marker\n`;
  const { workspace, tag } = await workspaceWith(t, dockerfile);
  const first = await shell(workspace, 'cat /etc/toolcell-marker');
  t.is(first.code, 0, first.stderr);
  t.true(first.text.includes(marker), first.text);
  t.regex(first.stderr, new RegExp(`toolcell: sandbox image: .*building ${tag}`));
  t.regex(first.stderr, /toolcell: sandbox image: .*Step 1\/\d+|step 1\/\d+/i);
  const again = await shell(workspace, 'cat /etc/toolcell-marker');
  t.true(again.text.includes(marker));
  t.notRegex(again.stderr, /building/);
  // Changed: a new tag, built again.
  const changed = `${dockerfile}RUN echo more >> /etc/toolcell-marker\n`;
  await writeFile(join(workspace, '.toolcell', 'sandbox.Dockerfile'), changed);
  const newTag = customImageTag(await baseId(), changed);
  t.teardown(async () => {
    await run('docker', ['image', 'rm', newTag]).catch(() => undefined);
  });
  const third = await shell(workspace, 'cat /etc/toolcell-marker');
  t.regex(third.text, /more/);
  t.regex(third.stderr, new RegExp(`building ${newTag}`));
});

test('USER root, ENTRYPOINT, ENV LD_PRELOAD, HEALTHCHECK and a replaced supervisor do not weaken the container', async (t) => {
  const dockerfile = [
    'ARG TOOLCELL_SANDBOX_IMAGE',
    'FROM ${TOOLCELL_SANDBOX_IMAGE}',
    'USER root',
    `RUN printf 'import os\\nos.execv("/bin/sh", ["sh", "-c", "exec sleep 100000"])\\n' > /opt/toolcell/supervisor/supervisor.py && printf 'print("evil")\\n' > /opt/toolcell/supervisor/json.py`,
    'ENV LD_PRELOAD=/nonexistent/evil.so PYTHONPATH=/tmp/evil',
    'HEALTHCHECK --interval=1s CMD touch /tmp/healthcheck-ran',
    'ENTRYPOINT ["/bin/sh", "-c", "exec sleep 100000", "--"]',
    '',
  ].join('\n');
  const { workspace } = await workspaceWith(t, dockerfile);
  // A workspace of an ordinary user's: commands run as its owner, whatever USER the image names.
  for (const path of [workspace, join(workspace, '.toolcell'), join(workspace, '.toolcell', 'sandbox.Dockerfile')]) await chown(path, 4242, 4242);
  const result = await shell(
    workspace,
    'id -u; grep -E "^(NoNewPrivs|CapEff)" /proc/self/status; python3 -c "import ctypes; print(\'prctl-nnp\', ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))"; sha256sum /opt/toolcell/supervisor/supervisor.py; ls /opt/toolcell/supervisor/json.py 2>&1; echo "preload=[$LD_PRELOAD]"; hostname',
  );
  t.is(result.code, 0, result.stderr);
  const expected = createHash('sha256')
    .update(await readFile(join(sandboxRecipeDir(), 'supervisor', 'supervisor.py')))
    .digest('hex');
  t.true(result.text.includes(expected), `the supervisor is toolcell's: ${result.text}`);
  t.regex(result.text, /No such file/, 'the stray module beside it is gone');
  // gVisor's status has no NoNewPrivs line: prctl(PR_GET_NO_NEW_PRIVS) asks its kernel.
  t.regex(result.text, UNDER_GVISOR ? /prctl-nnp 1/ : /NoNewPrivs:\s+1/);
  t.regex(result.text, /CapEff:\s+0000000000000000/);
  t.regex(result.text, /preload=\[\]/);
  const uid = /Output: (\d+)\\n/.exec(result.text)?.[1];
  t.is(uid, '4242', 'USER root in the image does not make commands root');
});

test('a Dockerfile that declares a VOLUME is refused, and nothing runs', async (t) => {
  const { workspace } = await workspaceWith(t, 'ARG TOOLCELL_SANDBOX_IMAGE\nFROM ${TOOLCELL_SANDBOX_IMAGE}\nVOLUME /var/scratch\n');
  const result = await shell(workspace, 'echo ran');
  t.regex(result.text, /declares VOLUME \/var\/scratch/);
  t.notRegex(result.text, /"output":"ran/);
});

test("an untrusted workspace's Dockerfile is never built: a warning, and the commands run on toolcell's image", async (t) => {
  const { workspace, tag } = await workspaceWith(t, 'ARG TOOLCELL_SANDBOX_IMAGE\nFROM ${TOOLCELL_SANDBOX_IMAGE}\nRUN touch /etc/untrusted-built\n');
  const result = await shell(workspace, 'ls /etc/untrusted-built 2>&1 || echo not-there', false);
  t.regex(result.stderr, /sandbox\.Dockerfile ignored: the workspace is not trusted/);
  t.regex(result.text, /not-there/);
  await t.throwsAsync(run('docker', ['image', 'inspect', tag]));
});

test('toolcell sandbox build also builds a trusted workspace’s image, with the same progress, and prints both tags', async (t) => {
  const { workspace, tag } = await workspaceWith(
    t,
    `ARG TOOLCELL_SANDBOX_IMAGE\nFROM \${TOOLCELL_SANDBOX_IMAGE}\nRUN echo ${randomBytes(4).toString('hex')} > /etc/built\n`,
  );
  const untrusted = await runCli(['sandbox', 'build', '--workspace', workspace]);
  t.is(untrusted.code, 0, untrusted.stderr);
  t.is(untrusted.stdout, `${sandboxImageTag()}\n`);
  t.regex(untrusted.stderr, /sandbox\.Dockerfile ignored: the workspace is not trusted/);
  const trusted = await runCli(['sandbox', 'build', '--workspace', workspace, '--trust-workspace']);
  t.is(trusted.code, 0, trusted.stderr);
  t.is(trusted.stdout, `${sandboxImageTag()}\n${tag}\n`);
  t.regex(trusted.stderr, new RegExp(`built ${tag}`));
});
