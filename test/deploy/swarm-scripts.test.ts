/**
 * The operator's scripts of deploy/swarm/ where they need no Swarm: their
 * argument checks (each a clear error, exit 2, before anything is built or
 * changed), build-images.sh's checks of what it needs (a built package, an
 * engine that answers, a Node binary), and the server command deploy.sh
 * deploys by default (`--print-server-cmd`). The deploy itself runs in
 * `npm run test:cluster`.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = here.includes(`${sep}dist${sep}test${sep}`) ? join(here, '..', '..', '..') : join(here, '..', '..');
const SWARM = join(REPO_ROOT, 'deploy', 'swarm');
/** An engine address nothing answers on: what the scripts must not reach in these checks. */
const NO_ENGINE = 'unix:///nonexistent/docker.sock';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(script: string, args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const merged: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: NO_ENGINE, ...env };
    for (const [key, value] of Object.entries(env)) if (value === undefined) delete merged[key];
    const child = spawn('bash', [script, ...args], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const buildImages = (args: string[], env?: Record<string, string | undefined>) => run(join(SWARM, 'build-images.sh'), args, env);
const deploy = (args: string[], env: Record<string, string | undefined> = {}) =>
  run(join(SWARM, 'deploy.sh'), args, { TOOLCELL_SERVER_CMD: undefined, ...env });

/** The standard server command for these etcd addresses and server port, as DESIGN.md's "Running across machines" gives it. */
function standardCommand(addresses: string[], port = 8080): string[] {
  const secrets = '/run/secrets';
  return [
    'serve',
    '--http',
    `0.0.0.0:${port}`,
    '--tenants',
    '/var/lib/toolcell/tenants.json',
    '--data-dir',
    '/var/lib/toolcell/hosting',
    '--audit',
    '/var/lib/toolcell/audit.log',
    '--tls-cert',
    `${secrets}/toolcell-server.pem`,
    '--tls-key',
    `${secrets}/toolcell-server-key.pem`,
    '--etcd',
    addresses.map((address) => `https://${address}:2379`).join(','),
    '--etcd-ca',
    `${secrets}/toolcell-ca.pem`,
    '--etcd-cert',
    `${secrets}/toolcell-server.pem`,
    '--etcd-key',
    `${secrets}/toolcell-server-key.pem`,
    '--etcd-server-name',
    'etcd',
    '--node-url',
    `https://@NODE_ADDRESS@:${port}`,
  ];
}

test('build-images.sh --help says what it builds, its tags and how images reach the nodes', async (t) => {
  const { code, stdout } = await buildImages(['--help']);
  t.is(code, 0);
  for (const name of ['launcher', 'etcd', 'haproxy', 'server']) t.true(stdout.includes(`toolcell-swarm-${name}:TAG`), name);
  t.regex(stdout, /--load-on HOST/);
  t.regex(stdout, /registry/);
  t.regex(stdout, /toolcell-base:bookworm/);
});

test('build-images.sh refuses bad arguments before it builds anything', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--bogus'], /unknown argument --bogus/],
    [['--tag'], /--tag needs a value/],
    [['--tag', '-x'], /bad --tag '-x'/],
    [['--tag', 'a'.repeat(129)], /bad --tag/],
    [['--base', 'Bad Image'], /bad --base/],
    [['--load-on', 'host;rm -rf /'], /bad --load-on/],
    [['--node', '/nonexistent/node'], /not an executable file/],
    [['--node', '/bin/sh'], /is not a Node binary/],
  ];
  for (const [args, message] of cases) {
    const { code, stdout, stderr } = await buildImages(args);
    t.is(code, 2, args.join(' '));
    t.regex(stderr, message, args.join(' '));
    t.is(stdout, '', `${args.join(' ')}: no image lines`);
  }
});

test('build-images.sh refuses a Node older than 20.19, naming the version it found', async (t) => {
  // This machine's real node, made to report an older version (NODE_OPTIONS reaches the script's `node -p`).
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-old-node-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const older = join(dir, 'older.cjs');
  await writeFile(older, "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '20.18.1' } });\n");
  const { code, stdout, stderr } = await buildImages(['--node', process.execPath], { NODE_OPTIONS: `--require ${older}` });
  t.is(code, 2);
  t.regex(stderr, /Node 20\.18\.1 at .*: toolcell needs >= 20\.19/);
  t.is(stdout, '');
});

test('build-images.sh says so when the engine does not answer', async (t) => {
  const { code, stderr } = await buildImages(['--tag', 'never-built']);
  t.is(code, 2);
  t.regex(stderr, /Docker engine does not answer/);
});

test('build-images.sh says the package must be built first when dist/ is missing', async (t) => {
  // A checkout without dist/: the script and package.json, where the script takes them from.
  const root = await mkdtemp(join(tmpdir(), 'toolcell-build-images-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'deploy', 'swarm'), { recursive: true });
  await copyFile(join(SWARM, 'build-images.sh'), join(root, 'deploy', 'swarm', 'build-images.sh'));
  await chmod(join(root, 'deploy', 'swarm', 'build-images.sh'), 0o755);
  await writeFile(join(root, 'package.json'), await readFile(join(REPO_ROOT, 'package.json')));
  const { code, stderr } = await run(join(root, 'deploy', 'swarm', 'build-images.sh'), []);
  t.is(code, 2);
  t.regex(stderr, /dist\/src\/cli\/bin\.js is missing: build the package first/);
});

test('deploy.sh --print-server-cmd prints the standard server command for the etcd addresses, asking no engine', async (t) => {
  const addresses = ['10.0.0.1', '10.0.0.2', 'etcd3.example.net'];
  const { code, stdout, stderr } = await deploy(['--print-server-cmd', '--etcd-addresses', addresses.join(',')]);
  t.is(code, 0, stderr);
  t.deepEqual(JSON.parse(stdout), standardCommand(addresses));
  const other = await deploy(['--print-server-cmd', '--etcd-addresses', addresses.join(','), '--server-port', '9000']);
  t.deepEqual(JSON.parse(other.stdout), standardCommand(addresses, 9000));
});

test('deploy.sh --server-arg appends flags as they are, quotes and backslashes too', async (t) => {
  const extra = ['--metrics', '0.0.0.0:9464', '--oidc-issuer', 'https://id.example.com/"realm"\\x', 'tab\there'];
  const { code, stdout, stderr } = await deploy(['--print-server-cmd', '--etcd-addresses', 'a,b,c', ...extra.flatMap((arg) => ['--server-arg', arg])]);
  t.is(code, 0, stderr);
  t.deepEqual(JSON.parse(stdout), [...standardCommand(['a', 'b', 'c']), ...extra]);
});

test('deploy.sh: a TOOLCELL_SERVER_CMD given wins over the default, --server-arg appended to it', async (t) => {
  const given = ['serve', '--http', '0.0.0.0:7000'];
  const plain = await deploy(['--print-server-cmd', '--etcd-addresses', 'a,b,c'], { TOOLCELL_SERVER_CMD: JSON.stringify(given) });
  t.deepEqual(JSON.parse(plain.stdout), given);
  const appended = await deploy(['--print-server-cmd', '--server-arg', '--metrics', '--server-arg', '0.0.0.0:9464'], {
    TOOLCELL_SERVER_CMD: JSON.stringify(given, null, 1),
  });
  t.is(appended.code, 0, appended.stderr);
  t.deepEqual(JSON.parse(appended.stdout), [...given, '--metrics', '0.0.0.0:9464']);
  const empty = await deploy(['--print-server-cmd', '--server-arg', 'x'], { TOOLCELL_SERVER_CMD: '[]' });
  t.deepEqual(JSON.parse(empty.stdout), ['x']);
});

test('deploy.sh refuses bad arguments with a clear error, before it asks the Swarm anything', async (t) => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--bogus'], {}, /unknown argument --bogus/],
    [['--tag'], {}, /--tag needs a value/],
    [['--tag', '../x'], {}, /bad --tag/],
    [['--stack', 'Bad'], {}, /bad --stack/],
    [['--front-port', '0'], {}, /bad --front-port/],
    [['--server-port', '70000'], {}, /bad --server-port/],
    [['--etcd-addresses', 'a,b'], {}, /needs three addresses/],
    [['--etcd-addresses', 'a,b,c d'], {}, /bad --etcd-addresses entry/],
    [['--server-arg', 'a\u0001b'], {}, /control character in --server-arg/],
    [['--print-server-cmd', '--server-arg', 'x'], { TOOLCELL_SERVER_CMD: '"serve"' }, /TOOLCELL_SERVER_CMD is not a JSON array/],
    [['--front-cert', '/nonexistent'], {}, /--front-cert and --front-key go together/],
  ];
  for (const [args, env, message] of cases) {
    const { code, stdout, stderr } = await deploy(args, env);
    t.is(code, 2, args.join(' '));
    t.regex(stderr, message, args.join(' '));
    t.is(stdout, '', args.join(' '));
  }
});

test('deploy.sh says so when its engine is not a Swarm manager (the default images and command need none of the variables)', async (t) => {
  const { code, stderr } = await deploy([], {
    TOOLCELL_LAUNCHER_IMAGE: undefined,
    TOOLCELL_SERVER_IMAGE: undefined,
    TOOLCELL_ETCD_IMAGE: undefined,
    TOOLCELL_HAPROXY_IMAGE: undefined,
  });
  t.is(code, 2);
  t.regex(stderr, /not a Swarm manager/);
  t.notRegex(stderr, /set TOOLCELL_/);
});
