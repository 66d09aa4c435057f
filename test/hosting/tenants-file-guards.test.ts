/**
 * Operator mistakes in the tenants file that would open a door, tried the
 * way an operator makes them (`toolcell tenant add`, or editing the file by
 * hand under a running server): limits the containers refuse, and a
 * workspace that meets another tenant's, the default ones included, either
 * way round, equal, or through a symlink.
 */
import test, { type ExecutionContext } from 'ava';
import { once } from 'node:events';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { generateApiKey } from '../../src/hosting/auth/api-key.js';
import { TenantStore } from '../../src/hosting/tenants/tenant-store.js';
import { defaultWorkspacePath } from '../../src/hosting/tenants/tenant-workspace.js';
import { emptyTenantsFile, parseTenantsFile, writeTenantsFile, type TenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { runCli } from '../helpers/cli.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

const validKey = () => {
  const key = generateApiKey();
  return { id: key.id, hash: key.hash, createdAt: new Date().toISOString() };
};

test('limits the container layer would refuse are refused when the file is read, naming the field and the bounds', (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ memory: '2048g' }, /tenants\.acme\.limits\.memory must be a size from 16m to 1024g/],
    [{ memory: 2 * 1024 ** 4 }, /tenants\.acme\.limits\.memory must be a size from 16m to 1024g/],
    [{ memory: '8m' }, /limits\.memory must be a size from 16m/],
    [{ cpus: 2000 }, /limits\.cpus/],
    [{ pids: 2_000_000 }, /limits\.pids/],
    [{ diskBytes: '8m' }, /limits\.diskBytes must be a size of at least 16m/],
    [{ sessionsPerMinute: 0 }, /limits\.sessionsPerMinute/],
  ];
  for (const [limits, message] of cases) {
    const content = { version: 1, tenants: { acme: { keys: [validKey()], limits } } };
    t.throws(() => parseTenantsFile('/srv/tenants.json', content), { code: 'invalid_tenants_file', message } as never, JSON.stringify(limits));
  }
  t.notThrows(() => parseTenantsFile('/srv/tenants.json', { version: 1, tenants: { acme: { keys: [], limits: { memory: '1024g', diskBytes: '16m' } } } }));
});

test('tenant add --limit memory=2048g is a usage error and writes nothing', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  await addTenant(file, 'acme');
  const before = await readFile(file, 'utf8');
  const result = await runCli(['tenant', 'add', 'acme', '--tenants', file, '--limit', 'memory=2048g']);
  t.is(result.code, 2, result.stderr);
  t.regex(result.stderr, /memory must be a size from 16m to 1024g/);
  t.is(result.stdout, '', 'no key printed');
  t.is(await readFile(file, 'utf8'), before);
});

/** A store over a file with acme at 512m, its log lines, and the same file with the limit the containers refuse. */
async function acmeStore(t: ExecutionContext, options: { pollMs: number; settleMs?: number }) {
  const file = join(await hostingFolder(t), 'tenants.json');
  const content = emptyTenantsFile();
  content.tenants['acme'] = { keys: [validKey()], limits: { memory: '512m' } };
  await writeTenantsFile(file, content);
  const lines: string[] = [];
  const store = await TenantStore.open({ file, ...options, onLog: (line) => lines.push(line) });
  t.teardown(() => store.close());
  const edited = JSON.stringify({ ...content, tenants: { acme: { ...content.tenants['acme'], limits: { memory: '2048g' } } } });
  return { file, store, lines, edited };
}

test('a hand edit with a limit the containers refuse keeps the last good state, and the log says why', async (t) => {
  const { file, store, lines, edited } = await acmeStore(t, { pollMs: 50 });
  await writeFile(file, edited);
  await store.reload();
  t.is(store.tenant('acme')?.limits.memory, 512 * 1024 ** 2, 'the last good limits stay');
  t.is(lines.length, 1);
  t.regex(lines[0]!, /tenants\.acme\.limits\.memory must be a size from 16m to 1024g.*keeping the tenants as they were/);
});

test("a file caught half-written is read again, not logged: only the finished edit's problem is", async (t) => {
  // A long settle time, so that the finished write surely lands within it on a busy machine.
  const { file, store, lines, edited } = await acmeStore(t, { pollMs: 60_000, settleMs: 3000 });
  await writeFile(file, edited.slice(0, edited.length / 2));
  const reading = store.reload();
  // Long enough for the half-written file to be read and found wrong (not a bound on anything).
  await delay(300);
  await writeFile(file, edited);
  await reading;
  t.is(store.tenant('acme')?.limits.memory, 512 * 1024 ** 2, 'the last good limits stay');
  t.deepEqual(lines.length, 1, lines.join('\n'));
  t.regex(lines[0]!, /tenants\.acme\.limits\.memory must be a size from 16m to 1024g/);
});

/** A folder with a tenants file holding `bar` (default workspace) and `own` (a workspace of its own), and the server's data dir. */
async function layout(t: { teardown(fn: () => Promise<void>): void }) {
  const dir = await hostingFolder(t);
  const file = join(dir, 'etc', 'tenants.json');
  await mkdir(join(dir, 'etc'));
  const dataDir = join(dir, 'data');
  const ownWorkspace = join(dir, 'srv', 'own');
  await mkdir(ownWorkspace, { recursive: true });
  await addTenant(file, 'bar');
  await addTenant(file, 'own', ['--workspace', ownWorkspace, '--data-dir', dataDir]);
  await mkdir(defaultWorkspacePath(dataDir, 'bar'), { recursive: true });
  return { dir, file, dataDir, ownWorkspace };
}

test("tenant add refuses a workspace that meets another's, default workspaces included: inside, containing, equal, through symlinks", async (t) => {
  const { dir, file, dataDir, ownWorkspace } = await layout(t);
  await symlink(defaultWorkspacePath(dataDir, 'bar'), join(dir, 'link-to-bar'));
  await symlink(ownWorkspace, join(dir, 'link-to-own'));
  await symlink(join(dir, 'srv'), join(dir, 'link-to-srv'));
  const policy = join(dir, 'policies', 'foo.toml');
  await mkdir(join(dir, 'policies'));
  await writeFile(policy, '[[rule]]\nname = "no-rm"\ncommandPrefix = "rm"\ndecision = "deny"\n');
  const before = await readFile(file, 'utf8');
  const attempts: Array<[string, string[], RegExp]> = [
    ["inside bar's default workspace", ['--workspace', join(defaultWorkspacePath(dataDir, 'bar'), 'sub')], /lies in the server's data directory/],
    ['the data dir itself', ['--workspace', dataDir], /lies in the server's data directory/],
    ['containing the data dir', ['--workspace', dir], /contains the server's data directory/],
    ["a symlink to bar's default workspace", ['--workspace', join(dir, 'link-to-bar')], /after symlinks\) lies in the server's data directory/],
    ["equal to own's workspace through a symlink", ['--workspace', join(dir, 'link-to-own')], /overlaps tenant own's workspace/],
    ["inside own's workspace", ['--workspace', join(ownWorkspace, 'deeper')], /overlaps tenant own's workspace/],
    ["containing own's workspace through a symlink", ['--workspace', join(dir, 'link-to-srv')], /overlaps tenant own's workspace/],
    ['holding the tenants file', ['--workspace', join(dir, 'etc')], /holds the tenants file/],
    ['holding its own policy file', ['--workspace', join(dir, 'policies'), '--policy', policy], /holds the policy file/],
  ];
  for (const [what, args, message] of attempts) {
    const result = await runCli(['tenant', 'add', 'foo', '--tenants', file, '--data-dir', dataDir, ...args]);
    t.is(result.code, 2, `${what}: ${result.stderr}`);
    t.regex(result.stderr, message, what);
    t.is(result.stdout, '', `${what}: no key printed`);
  }
  t.is(await readFile(file, 'utf8'), before, 'nothing was written');
  const apart = await runCli(['tenant', 'add', 'foo', '--tenants', file, '--data-dir', dataDir, '--workspace', join(dir, 'srv', 'foo')]);
  t.is(apart.code, 0, apart.stderr);
});

test("a hand edit giving a tenant another's default workspace through a symlink is refused by the running server's store, which keeps the last good state", async (t) => {
  const { dir, file, dataDir } = await layout(t);
  const lines: string[] = [];
  const store = await TenantStore.open({ file, pollMs: 50, dataDir, onLog: (line) => lines.push(line) });
  t.teardown(() => store.close());
  await symlink(defaultWorkspacePath(dataDir, 'bar'), join(dir, 'innocent-looking'));
  const content = JSON.parse(await readFile(file, 'utf8')) as TenantsFile;
  content.tenants['foo'] = { workspace: join(dir, 'innocent-looking'), keys: [validKey()] };
  // Written as an editor would, past the commands' own checks (the file's schema passes: no two paths are alike).
  await writeFile(file, JSON.stringify(content));
  await store.reload();
  t.is(store.tenant('foo'), undefined, 'foo does not exist');
  t.regex(
    lines.join('\n'),
    /tenants\.foo\.workspace .*innocent-looking \(.*after symlinks\) lies in the server's data directory .*keeping the tenants as they were/,
  );
  // Fixed, the next edit applies.
  const reloaded = once(store, 'reloaded');
  content.tenants['foo']!.workspace = join(dir, 'srv', 'foo');
  await writeFile(file, JSON.stringify(content));
  await reloaded;
  t.truthy(store.tenant('foo'));
});

test('a server refuses to start on a tenants file whose workspace lies in its data directory', async (t) => {
  const { file, dataDir } = await layout(t);
  const content = JSON.parse(await readFile(file, 'utf8')) as TenantsFile;
  content.tenants['foo'] = { workspace: join(dataDir, 'tenants', 'bar'), keys: [validKey()] };
  await writeFile(file, JSON.stringify(content));
  const result = await runCli(['serve', '--http', '127.0.0.1:0', '--tenants', file, '--data-dir', dataDir]);
  t.is(result.code, 2, result.stderr);
  t.regex(result.stderr, /tenants\.foo\.workspace .* lies in the server's data directory/);
});
