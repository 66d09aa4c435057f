import test from 'ava';
import { chmod, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SecretBox } from '../../src/secrets/secret-box.js';
import { runCli } from '../helpers/cli.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

/** `toolcell tenant secret set|list|rm` as an operator runs them: the value comes from stdin and is stored sealed. */

const VALUE = 'npm_Tok3n-for-acme-0f9e21';

async function setup(t: Parameters<typeof hostingFolder>[0]) {
  const dir = await hostingFolder(t, 'toolcell-tenant-secret-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  await addTenant(file, 'acme');
  await addTenant(file, 'globex');
  return { dir, file, dataDir };
}

test('set reads the value from stdin and stores it sealed; list shows names only; rm removes it', async (t) => {
  const { file, dataDir } = await setup(t);
  const set = await runCli(['tenant', 'secret', 'set', 'acme', 'NPM_TOKEN', '--tenants', file, '--data-dir', dataDir], { input: `${VALUE}\n` });
  t.is(set.code, 0, set.stderr);
  t.is(set.stdout, '');
  t.false(set.stderr.includes(VALUE));
  const text = await readFile(file, 'utf8');
  t.false(text.includes(VALUE), 'the tenants file alone does not reveal it');
  t.false(text.includes(Buffer.from(VALUE).toString('base64').slice(0, 12)));
  t.is((await stat(join(dataDir, 'secrets.key'))).mode & 0o777, 0o600);
  const sealed = (JSON.parse(text) as { tenants: { acme: { secrets: { NPM_TOKEN: { sealed: string } } } } }).tenants.acme.secrets.NPM_TOKEN.sealed;
  const box = await SecretBox.open(dataDir);
  t.is(box.open('acme', 'NPM_TOKEN', sealed), VALUE, 'the server opens it with the key');
  t.throws(
    () => box.open('globex', 'NPM_TOKEN', sealed),
    { message: /Secret NPM_TOKEN of tenant globex does not open/ },
    'moved to another tenant, it does not open',
  );
  t.throws(() => box.open('acme', 'OTHER', sealed), { code: 'secret_unavailable' } as never);

  const list = await runCli(['tenant', 'secret', 'list', 'acme', '--tenants', file]);
  t.regex(list.stdout, /^NPM_TOKEN {2}set \d{4}-/);
  const json = await runCli(['tenant', 'secret', 'list', 'acme', '--tenants', file, '--json']);
  t.deepEqual(
    (JSON.parse(json.stdout) as { secrets: Array<{ name: string }> }).secrets.map((secret) => secret.name),
    ['NPM_TOKEN'],
  );
  for (const output of [list.stdout, json.stdout, (await runCli(['tenant', 'list', '--tenants', file, '--json'])).stdout]) {
    t.false(output.includes(VALUE));
    t.false(output.includes(sealed));
  }
  // Another key for the tenant keeps its secrets.
  await addTenant(file, 'acme');
  t.truthy((JSON.parse(await readFile(file, 'utf8')) as { tenants: { acme: { secrets?: unknown } } }).tenants.acme.secrets);

  const rm = await runCli(['tenant', 'secret', 'rm', 'acme', 'NPM_TOKEN', '--tenants', file]);
  t.is(rm.code, 0, rm.stderr);
  t.is((await runCli(['tenant', 'secret', 'list', 'acme', '--tenants', file])).stdout, 'no secrets\n');
});

test('bad input is a usage error that never quotes the value and changes nothing', async (t) => {
  const { file, dataDir } = await setup(t);
  const before = await readFile(file, 'utf8');
  const cases: Array<[string[], string, RegExp]> = [
    [['set', 'acme', 'bad-name'], VALUE, /secret name "bad-name" must be an environment variable name/],
    [['set', 'acme', 'PATH'], VALUE, /"PATH" is set by toolcell/],
    [['set', 'nobody', 'TOKEN'], VALUE, /no tenant "nobody"/],
    [['set', 'acme', 'TOKEN'], 'q7x', /the value of TOKEN is shorter than 8 characters/],
    [['set', 'acme', 'TOKEN'], '', /the value of TOKEN is shorter than 8 characters/],
    [['set', 'acme', 'TOKEN', VALUE], '', /too many arguments/],
    [['rm', 'acme', 'NONE'], '', /tenant acme has no secret "NONE"/],
  ];
  for (const [args, input, message] of cases) {
    const result = await runCli(['tenant', 'secret', ...args, '--tenants', file, ...(args[0] === 'set' ? ['--data-dir', dataDir] : [])], { input });
    t.not(result.code, 0, args.join(' '));
    t.regex(result.stderr, message);
    t.false(result.stderr.includes(input) && input.length > 0 && !args.includes(input), args.join(' '));
  }
  t.is(await readFile(file, 'utf8'), before);
});

test('a key file others can read is refused', async (t) => {
  const { file, dataDir } = await setup(t);
  t.is((await runCli(['tenant', 'secret', 'set', 'acme', 'TOKEN', '--tenants', file, '--data-dir', dataDir], { input: VALUE })).code, 0);
  await chmod(join(dataDir, 'secrets.key'), 0o644);
  const result = await runCli(['tenant', 'secret', 'set', 'acme', 'OTHER', '--tenants', file, '--data-dir', dataDir], { input: VALUE });
  t.is(result.code, 2);
  t.regex(result.stderr, /secrets key .* can be read by others \(mode 644\); chmod 600 it/);
});
