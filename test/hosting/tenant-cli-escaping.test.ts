import test from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

/** `toolcell tenant list` and the tenant commands' messages print what a hand-edited tenants file holds escaped. */

// eslint-disable-next-line no-control-regex -- finding control characters is the point.
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/;

test('tenant list escapes every value of the file, and --json keeps them exact', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  await addTenant(file, 'acme');
  const content = JSON.parse(await readFile(file, 'utf8')) as { tenants: Record<string, Record<string, unknown>> };
  // Paths may hold anything but NUL; an editor of the file chose these.
  const workspace = '/srv/a\x1b[2J\x1b[Hb c';
  const policy = '/srv/policies/\u202egnp.toml';
  content.tenants['acme'] = { ...content.tenants['acme'], workspace, policies: [policy] };
  await writeFile(file, JSON.stringify(content), { mode: 0o600 });
  const list = await runCli(['tenant', 'list', '--tenants', file]);
  t.is(list.code, 0, list.stderr);
  t.false(RAW.test(list.stdout), JSON.stringify(list.stdout));
  t.true(list.stdout.includes('workspace "/srv/a\\x1b[2J\\x1b[Hb c"'), list.stdout);
  t.true(list.stdout.includes('policy /srv/policies/\\u202egnp.toml'), list.stdout);
  const json = await runCli(['tenant', 'list', '--json', '--tenants', file]);
  t.false(RAW.test(json.stdout), json.stdout);
  const parsed = JSON.parse(json.stdout) as { tenants: Array<{ workspace: string; policies: string[] }> };
  t.is(parsed.tenants[0]!.workspace, workspace);
  t.deepEqual(parsed.tenants[0]!.policies, [policy]);
});

test("the tenant commands' messages escape the names they quote", async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  await addTenant(file, 'acme');
  // JSON.stringify, which quoted it before, leaves C1 controls (U+009B is CSI) and bidi overrides raw.
  const revoke = await runCli(['tenant', 'revoke', 'acme', '--key', 'x\u009b2K\u202eforged', '--tenants', file]);
  t.is(revoke.code, 2);
  t.false(RAW.test(revoke.stderr.replace(/\n$/, '')), JSON.stringify(revoke.stderr));
  t.true(revoke.stderr.includes('has no key "x\\x9b2K\\u202eforged"'), revoke.stderr);
});
