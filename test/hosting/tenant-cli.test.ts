import test from 'ava';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

/** `toolcell tenant add|list|revoke|remove` as a user runs them. */

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
    [['tenant', 'list'], /--tenants <file>/],
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
  for (const command of ['add', 'list', 'revoke', 'remove']) t.regex(help.stdout, new RegExp(`^\\s+${command}\\b`, 'm'));
  const add = await runCli(['tenant', 'add', '--help']);
  t.regex(add.stdout, /--limit <key=value>/);
  t.regex(add.stdout, /commandTimeoutSeconds/);
});
