import test from 'ava';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

/** `toolcell tenant add|set|list|revoke|remove` as a user runs them. */

test('add prints only the new key, once; the file holds its hash and never the key', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  const key = await addTenant(file, 'acme', ['--limit', 'memory=512m', '--limit', 'sessions=2']);
  const text = await readFile(file, 'utf8');
  t.false(text.includes(key.slice(16)));
  t.is((await stat(file)).mode & 0o777, 0o600);
  const second = await addTenant(file, 'acme');
  t.not(second, key);
  const content = JSON.parse(await readFile(file, 'utf8')) as { tenants: Record<string, { keys: unknown[]; limits: Record<string, unknown> }> };
  t.is(content.tenants['acme']!.keys.length, 2);
  t.deepEqual(content.tenants['acme']!.limits, { memory: '512m', sessions: 2 });
});

test('list shows key ids, revocation and limits, never a hash', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  const key = await addTenant(file, 'acme', ['--limit', 'cpus=0.5']);
  const id = key.slice(3, 15);
  t.is((await runCli(['tenant', 'revoke', 'acme', '--key', id, '--tenants', file])).code, 0);
  const list = await runCli(['tenant', 'list', '--tenants', file]);
  t.is(list.code, 0, list.stderr);
  t.regex(list.stdout, new RegExp(`key ${id} .*REVOKED`));
  t.regex(list.stdout, /cpus=0\.5/);
  t.regex(list.stdout, /memory=512m/);
  const hash = (JSON.parse(await readFile(file, 'utf8')) as { tenants: { acme: { keys: Array<{ hash: string }> } } }).tenants.acme.keys[0]!.hash;
  t.false(list.stdout.includes(hash));
  const json = await runCli(['tenant', 'list', '--json', '--tenants', file]);
  t.false(json.stdout.includes(hash));
  t.like(JSON.parse(json.stdout), { tenants: [{ name: 'acme', keys: [{ id, revoked: true }] }] });
});

test('remove deletes the tenant; revoke without --key revokes every key', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  await addTenant(file, 'one');
  await addTenant(file, 'one');
  await addTenant(file, 'two');
  t.is((await runCli(['tenant', 'revoke', 'one', '--tenants', file])).code, 0);
  t.is((await runCli(['tenant', 'remove', 'two', '--tenants', file])).code, 0);
  const content = JSON.parse(await readFile(file, 'utf8')) as { tenants: Record<string, { keys: Array<{ revokedAt?: string }> }> };
  t.deepEqual(Object.keys(content.tenants), ['one']);
  t.true(content.tenants['one']!.keys.every((key) => key.revokedAt !== undefined));
});

test('bad input is a usage error naming what is wrong, and prints no key', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'acme');
  const cases: Array<[string[], RegExp]> = [
    [['tenant', 'add', 'Bad Name', '--tenants', file], /tenant name "Bad Name" must be/],
    [['tenant', 'add', 'x', '--tenants', file, '--limit', 'memroy=1g'], /unknown limit "memroy"/],
    [['tenant', 'add', 'x', '--tenants', file, '--limit', 'memory=lots'], /--limit memory must be a size/],
    [['tenant', 'add', 'x', '--tenants', file, '--limit', 'sessions=0'], /--limit sessions/],
    [['tenant', 'revoke', 'nobody', '--tenants', file], /no tenant "nobody"/],
    [['tenant', 'revoke', 'acme', '--key', 'zzzzzzzzzzzz', '--tenants', file], /has no key "zzzzzzzzzzzz"/],
    [['tenant', 'remove', 'nobody', '--tenants', file], /no tenant "nobody"/],
    [['tenant', 'list', '--tenants', join(dir, 'missing.json')], /Cannot read tenants file/],
    [['tenant', 'list'], /give --tenants FILE \(or --etcd URLS/],
    [
      ['tenant', 'add', 'x', '--tenants', file, '--network-allow', 'http://example.com'],
      /--network-allow: "http:\/\/example\.com" is a URL; an entry is a host name with an optional :port, not a URL \(for this URL: "example\.com:80"\)/,
    ],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(args);
    t.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, message);
    t.is(result.stdout, '');
  }
});

test('--help describes every command', async (t) => {
  const help = await runCli(['tenant', '--help']);
  for (const command of ['add', 'set', 'list', 'revoke', 'remove']) t.regex(help.stdout, new RegExp(`^\\s+${command}\\b`, 'm'));
  const set = await runCli(['tenant', 'set', '--help']);
  for (const flag of ['--limit <key=value>', '--policy <file>', '--network-allow <entry>', '--workspace <dir>', '--runtime <name>'])
    t.true(set.stdout.includes(flag), flag);
  const add = await runCli(['tenant', 'add', '--help']);
  t.regex(add.stdout, /--limit <key=value>/);
  t.regex(add.stdout, /commandTimeoutSeconds/);
});

type Entry = {
  keys: Array<{ id: string; hash: string }>;
  limits?: Record<string, unknown>;
  policies?: string[];
  network?: unknown;
  workspace?: string;
  runtime?: string;
};
const tenantsIn = async (file: string) => (JSON.parse(await readFile(file, 'utf8')) as { tenants: Record<string, Entry> }).tenants;

test('set changes limits, policy files and network, prints no key, and keeps the keys as they were', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'acme', ['--limit', 'sessions=2', '--limit', 'memory=512m']);
  const before = (await tenantsIn(file))['acme']!;
  const policy = join(dir, 'acme.toml');
  await writeFile(policy, '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "rm"\ndecision = "deny"\n');
  const result = await runCli([
    'tenant',
    'set',
    'acme',
    '--tenants',
    file,
    '--limit',
    'sessions=5',
    '--limit',
    'idleSeconds=60',
    '--policy',
    policy,
    '--network-allow',
    'registry.npmjs.org',
    '--network-allow',
    '*.pythonhosted.org',
  ]);
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, '', 'no key');
  t.regex(result.stderr, /^toolcell tenant: changed acme \(--limit, --policy, --network-allow\) in /);
  const after = (await tenantsIn(file))['acme']!;
  t.deepEqual(after.keys, before.keys, 'the same keys, none added, none revoked');
  t.deepEqual(after.limits, { sessions: 5, memory: '512m', idleSeconds: 60 }, 'the limits given, over the others');
  t.deepEqual(after.policies, [policy]);
  t.deepEqual(after.network, { allow: ['registry.npmjs.org', '*.pythonhosted.org'] });
  t.is((await stat(file)).mode & 0o777, 0o600);

  const dropped = await runCli([
    'tenant',
    'set',
    'acme',
    '--tenants',
    file,
    '--limit',
    'sessions=default',
    '--limit',
    'memory=default',
    '--limit',
    'idleSeconds=default',
  ]);
  t.is(dropped.code, 0, dropped.stderr);
  t.is((await tenantsIn(file))['acme']!.limits, undefined, 'key=default drops the tenant’s own value');
  const listed = await runCli(['tenant', 'list', '--json', '--tenants', file]);
  t.like(JSON.parse(listed.stdout), { tenants: [{ name: 'acme', limits: { sessions: 4, idleSeconds: 1800 } }] });
});

test('add --runtime and set --runtime store the tenant’s runtime, which list shows; the defaults’ applies to a tenant without one', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  await addTenant(file, 'acme', ['--runtime', 'runsc']);
  await addTenant(file, 'beta');
  t.is((await tenantsIn(file))['acme']!.runtime, 'runsc');
  const set = await runCli(['tenant', 'set', 'beta', '--tenants', file, '--runtime', 'runc']);
  t.is(set.code, 0, set.stderr);
  t.regex(set.stderr, /^toolcell tenant: changed beta \(--runtime\) in /);
  t.is((await tenantsIn(file))['beta']!.runtime, 'runc');
  const content = JSON.parse(await readFile(file, 'utf8')) as { defaults?: Record<string, unknown> };
  content.defaults = { runtime: 'runsc' };
  await writeFile(file, JSON.stringify(content));
  await addTenant(file, 'gamma');
  const listed = await runCli(['tenant', 'list', '--json', '--tenants', file]);
  t.like(JSON.parse(listed.stdout), {
    tenants: [
      { name: 'acme', runtime: 'runsc' },
      { name: 'beta', runtime: 'runc' },
      { name: 'gamma', runtime: 'runsc' },
    ],
  });
  const text = await runCli(['tenant', 'list', '--tenants', file]);
  t.regex(text.stdout, /^ {2}runtime runc$/m);
});

test('set refuses an unknown tenant, a bad value and nothing to change, and leaves the file as it was', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'acme', ['--limit', 'sessions=2']);
  const original = await readFile(file);
  const modified = (await stat(file)).mtimeMs;
  const cases: Array<[string[], RegExp]> = [
    [['nobody', '--limit', 'sessions=3'], /no tenant "nobody" in .*toolcell tenant add creates one/],
    [['acme', '--limit', 'sessions=0'], /--limit sessions/],
    [['acme', '--limit', 'sessions=3', '--limit', 'memory=lots'], /--limit memory must be a size/],
    [['acme', '--limit', 'memroy=default'], /unknown limit "memroy"/],
    [['acme', '--network-allow', 'http://example.com'], /--network-allow: /],
    [['acme', '--runtime', 'run sc'], /--runtime must be a runtime name such as runsc or runc/],
    [['acme', '--limit', 'sessions=3', '--policy', join(dir, 'missing.toml')], /missing\.toml/],
    [['acme'], /nothing to change: give --workspace, --limit, --policy, --network-allow, --runtime/],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(['tenant', 'set', ...args, '--tenants', file]);
    t.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, message);
    t.is(result.stdout, '');
  }
  t.deepEqual(await readFile(file), original, 'not one byte changed');
  t.is((await stat(file)).mtimeMs, modified);
});
