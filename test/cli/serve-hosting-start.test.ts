/**
 * `toolcell serve --tenants` stops at start, exit 1 and one line naming what
 * to fix, when something it was asked for cannot be had: a listener
 * (`--http`, `--metrics`) whose address is taken or not on this machine, a
 * TLS pair that cannot serve, or no Docker engine (said as `exec` says it).
 * Before, a taken --metrics port printed `listen EADDRINUSE` and kept serving
 * tenants without metrics. The real CLI, real sockets.
 */
import anyTest from 'ava';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { HOW_TO_GET_AN_ENGINE } from '../../src/backends/docker/engine-advice.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

const dockerTest = await requireDocker(anyTest, 'cli/serve-hosting-start');

/** A port something else listens on, for as long as the test runs. */
async function takenPort(t: { teardown(fn: () => void): void }): Promise<number> {
  const holder: Server = createServer();
  holder.listen(0, '127.0.0.1');
  await once(holder, 'listening');
  t.teardown(() => void holder.close());
  return (holder.address() as AddressInfo).port;
}

/**
 * `toolcell serve --tenants FILE ARGS`, waited for until it exits; a server
 * still running after the backstop is killed, and the result says so.
 */
async function serveUntilExit(t: { teardown(fn: () => Promise<void>): void }, args: string[], env: NodeJS.ProcessEnv = {}) {
  const dir = await hostingFolder(t, 'toolcell-serve-start-');
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'acme');
  let killed = false;
  let timer: NodeJS.Timeout | undefined;
  const result: CliResult = await runCli(['serve', '--tenants', file, '--data-dir', join(dir, 'data'), '--approval', 'yolo', ...args], {
    env,
    onSpawn: (pid) => {
      // Generous: a start that fails does so in seconds; one that keeps serving never exits.
      timer = setTimeout(() => {
        killed = true;
        process.kill(pid, 'SIGKILL');
      }, 90_000);
    },
  });
  clearTimeout(timer);
  return { ...result, killed, lines: result.stderr.split('\n').filter((line) => line !== '') };
}

/** Exit 1 and one line, naming `flag`, no stack, nothing served. */
function stoppedNaming(t: import('ava').ExecutionContext, result: Awaited<ReturnType<typeof serveUntilExit>>, flag: string, reason: RegExp): void {
  t.false(result.killed, `the server kept running: ${result.stderr}`);
  t.is(result.code, 1, result.stderr);
  t.is(result.lines.length, 1, result.stderr);
  t.true(result.lines[0]!.startsWith(`toolcell serve: ${flag} `), result.stderr);
  t.regex(result.lines[0]!, reason);
  t.false(/^\s+at /m.test(result.stderr), 'no stack');
}

dockerTest('--metrics on a port another process listens on stops the start: exit 1, one line naming --metrics', async (t) => {
  const port = await takenPort(t);
  const result = await serveUntilExit(t, ['--http', '127.0.0.1:0', '--metrics', String(port)]);
  stoppedNaming(t, result, '--metrics', new RegExp(`--metrics ${port}: cannot listen: .*EADDRINUSE`));
});

dockerTest('--metrics on an address no interface has stops the start, naming --metrics', async (t) => {
  const result = await serveUntilExit(t, ['--http', '127.0.0.1:0', '--metrics', '192.0.2.1:9464']);
  stoppedNaming(t, result, '--metrics', /192\.0\.2\.1:9464: cannot listen: no interface of this machine has that address \(EADDRNOTAVAIL\)/);
});

dockerTest('--http on a port another process listens on stops the start, naming --http', async (t) => {
  const port = await takenPort(t);
  const result = await serveUntilExit(t, ['--http', `127.0.0.1:${port}`]);
  stoppedNaming(t, result, '--http', /cannot listen: .*EADDRINUSE/);
});

dockerTest('a TLS key that is not the certificate’s, or a file that is not PEM, stops the start naming --tls-cert and --tls-key', async (t) => {
  const dir = await hostingFolder(t, 'toolcell-serve-tls-');
  const pair = (name: string) => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '2',
        '-subj',
        `/CN=${name}`,
        '-keyout',
        join(dir, `${name}.key`),
        '-out',
        join(dir, `${name}.pem`),
      ],
      { stdio: 'ignore' },
    );
    return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  };
  const one = pair('one');
  const two = pair('two');
  const mismatch = await serveUntilExit(t, ['--http', '127.0.0.1:0', '--tls-cert', one.cert, '--tls-key', two.key]);
  stoppedNaming(t, mismatch, '--tls-cert', /--tls-key .*two\.key: cannot serve TLS with them: key values mismatch/);
  const missing = await serveUntilExit(t, ['--http', '127.0.0.1:0', '--tls-cert', one.cert, '--tls-key', join(dir, 'absent.key')]);
  stoppedNaming(t, missing, '--tls-cert', /absent\.key: cannot serve TLS with them: ENOENT/);
});

anyTest('no Docker engine: serve --tenants says it is the engine and how to get one, with the words exec uses, exit 1', async (t) => {
  const result = await serveUntilExit(t, ['--http', '127.0.0.1:0'], { DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
  t.false(result.killed, result.stderr);
  t.is(result.code, 1, result.stderr);
  t.is(result.lines.length, 1, result.stderr);
  t.regex(result.lines[0]!, /^toolcell serve: Cannot reach the Docker engine at unix:\/\/\/nonexistent\/docker\.sock \(ENOENT\)\. /);
  t.true(result.lines[0]!.includes(HOW_TO_GET_AN_ENGINE), result.stderr);
  // exec says the same: one piece of advice, not two copies of it.
  const exec = await runCli(['exec', '--json', '--approval', 'yolo'], {
    input: JSON.stringify([{ name: 'run_shell_command', args: { command: 'true' } }]),
    env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
  });
  t.true(exec.stdout.includes(HOW_TO_GET_AN_ENGINE), exec.stdout);
});
