/**
 * The tenants file's `policies` and `network` fields: their schema and
 * errors, the store reading the policy files (and keeping the last good
 * state on a bad one), the layered verdict (operator over tenant), and the
 * `toolcell tenant add --policy/--network-allow` flags. No Docker.
 */
import test from 'ava';
import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isToolcellError } from '../../src/errors.js';
import { generateApiKey } from '../../src/hosting/auth/api-key.js';
import { TenantPolicies } from '../../src/hosting/tenants/tenant-policy.js';
import { openTenantEgress, tenantShellOptions } from '../../src/hosting/tenants/tenant-network.js';
import { TenantStore } from '../../src/hosting/tenants/tenant-store.js';
import { emptyTenantsFile, readTenantsFile, writeTenantsFile, type TenantsFile } from '../../src/hosting/tenants/tenants-file.js';
import { parsePolicyText } from '../../src/policy/load-policy-file.js';
import { PolicyEngine } from '../../src/policy/policy-engine.js';
import { runCli } from '../helpers/cli.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';

const validKey = () => {
  const key = generateApiKey();
  return { id: key.id, hash: key.hash, createdAt: '2026-01-01T00:00:00.000Z' };
};

const DENY_RM = `[[rule]]\nname = "no-rm"\ncommandPrefix = "rm"\ndecision = "deny"\npriority = 1\n`;

test('policies and network are checked; errors name the file and the field', async (t) => {
  const file = join(await hostingFolder(t), 'tenants.json');
  const check = async (value: unknown, field: RegExp) => {
    await writeFile(file, JSON.stringify(value));
    const error = await t.throwsAsync(readTenantsFile(file));
    t.true(isToolcellError(error) && error.code === 'invalid_tenants_file');
    t.true(error!.message.includes(file), error!.message);
    t.regex(error!.message, field);
  };
  await check({ version: 1, tenants: { a: { keys: [], policies: ['relative.toml'] } } }, /tenants\.a\.policies\.0 must hold absolute paths/);
  await check({ version: 1, tenants: { a: { keys: [], network: 'all' } } }, /tenants\.a\.network must be "none" or \{"allow"/);
  await check({ version: 1, tenants: { a: { keys: [], network: { allow: ['bad host!'] } } } }, /tenants\.a\.network\.allow "bad host!" is not a host name/);
  await check({ version: 1, tenants: { a: { keys: [], network: { allow: [], deny: [] } } } }, /tenants\.a\.network/);
  await check({ version: 1, defaults: { network: { allow: ['*.'] } }, tenants: {} }, /defaults\.network\.allow/);
  await writeFile(
    file,
    JSON.stringify({ version: 1, defaults: { network: 'none', policies: ['/x.toml'] }, tenants: { a: { keys: [], network: { allow: ['a.test:8080'] } } } }),
  );
  t.like(await readTenantsFile(file), { tenants: { a: { network: { allow: ['a.test:8080'] } } } });
});

test('the store reads the policy files (defaults first) and the network; a bad policy file keeps the last good state', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const shared = join(dir, 'shared.toml');
  const own = join(dir, 'own.toml');
  await writeFile(shared, `[[rule]]\ntoolName = "web_fetch"\ndecision = "deny"\n`);
  await writeFile(own, DENY_RM);
  const content: TenantsFile = emptyTenantsFile();
  content.defaults = { policies: [shared], network: { allow: ['registry.npmjs.org'] } };
  content.tenants['a'] = { keys: [validKey()], policies: [own], network: { allow: ['allowed.test:8080'] } };
  content.tenants['b'] = { keys: [validKey()], network: 'none' };
  content.tenants['c'] = { keys: [validKey()] };
  await writeTenantsFile(file, content);
  const logs: string[] = [];
  const store = await TenantStore.open({ file, pollMs: 50, onLog: (line) => logs.push(line) });
  t.teardown(() => store.close());
  t.deepEqual(
    store.tenant('a')!.policy.map((rule) => rule.source.file),
    [shared, own],
  );
  t.deepEqual(store.tenant('a')!.network, ['allowed.test:8080']);
  t.is(store.tenant('b')!.network, undefined, '"none" overrides the defaults');
  t.deepEqual(store.tenant('c')!.network, ['registry.npmjs.org'], 'no network of its own: the defaults');
  t.is(store.tenant('b')!.policy.length, 1);

  await writeFile(own, '[[rule]]\ndecison = "deny"\n');
  content.tenants['a']!.limits = { sessions: 1 };
  await writeTenantsFile(file, content);
  await store.reload();
  t.is(store.tenant('a')!.limits.sessions, 4, 'the last good state is kept');
  t.regex(logs.join('\n'), /tenants\.a\.policies: Invalid policy file .*own\.toml: rule 1: decison is not a known field/);
  t.true(logs[0]!.includes(file));

  await writeFile(own, '');
  const missing = emptyTenantsFile();
  missing.tenants['a'] = { keys: [validKey()], policies: [join(dir, 'nowhere.toml')] };
  await writeTenantsFile(file, missing);
  const error = await t.throwsAsync(TenantStore.open({ file }));
  t.true(isToolcellError(error) && error.code === 'invalid_policy', String(error));
  t.regex(error!.message, /nowhere\.toml: the file does not exist/);
});

test('a tenant layer denies more, but never undoes an operator deny or ask_user at any priority', async (t) => {
  const operator = await PolicyEngine.create(
    parsePolicyText(
      `[[rule]]\nname = "op-no-curl"\ncommandPrefix = "curl"\ndecision = "deny"\n\n[[rule]]\nname = "op-allow-rm"\ncommandPrefix = "rm"\ndecision = "allow"\npriority = 50\n\n[[rule]]\nname = "op-ask-git"\ncommandPrefix = "git"\ndecision = "ask_user"\n`,
      'operator.toml',
    ),
  );
  const policies = new TenantPolicies(operator);
  const tenantRules = parsePolicyText(
    `${DENY_RM}\n[[rule]]\nname = "t-allow-curl"\ncommandPrefix = "curl"\ndecision = "allow"\npriority = 999\n\n[[rule]]\nname = "t-allow-git"\ncommandPrefix = "git"\ndecision = "allow"\npriority = 999\n\n[[rule]]\nname = "t-allow-ls"\ncommandPrefix = "ls"\ndecision = "allow"\n`,
    'tenant.toml',
  );
  const tenant = await policies.engineFor('acme', tenantRules);
  t.is(await policies.engineFor('acme', tenantRules), tenant, 'one engine per rule list');
  const shell = (command: string) => ({ toolName: 'run_shell_command', args: { command }, mode: 'yolo' as const });
  // Named in the tenant's terms: never by the operator's file paths.
  t.like(await tenant.decide(shell('curl http://x')), { decision: 'deny', rule: { file: "the operator's policy", index: 1, name: 'op-no-curl' } });
  t.like(await tenant.decide(shell('git push')), { decision: 'ask_user', rule: { name: 'op-ask-git' } });
  t.like(await tenant.decide(shell('rm -rf build')), { decision: 'deny', rule: { file: 'your tenant policy', index: 1, name: 'no-rm' } });
  t.like(await operator.decide(shell('rm -rf build')), { decision: 'allow', rule: { file: 'operator.toml' } }, 'the operator engine is unchanged');
  t.like(await tenant.decide(shell('ls -la')), { decision: 'allow', rule: { name: 't-allow-ls' } }, 'a tenant allow counts where the operator says nothing');
  t.like(await tenant.decide(shell('echo hi')), { decision: 'default' });
  const bare = await policies.engineFor('acme', []);
  t.like(
    await bare.decide(shell('curl http://x')),
    { decision: 'deny', rule: { file: "the operator's policy", name: 'op-no-curl' } },
    'no tenant rules: the operator rules, named in tenant terms',
  );
});

test('the operator sandbox.network never reaches a tenant; a tenant list becomes its own docker egress, its events read from its file', async (t) => {
  const operator = { liveUpdateIntervalMs: 5, docker: { image: 'img', egress: { allow: ['operator.example'], logFile: '/root/.toolcell/egress.log' } } };
  t.deepEqual(tenantShellOptions(operator, { tenant: 'b' }), { liveUpdateIntervalMs: 5, docker: { image: 'img' } });
  const none = await openTenantEgress(operator, { tenant: 'b', onEvent: () => t.fail() });
  t.deepEqual(none.options, { liveUpdateIntervalMs: 5, docker: { image: 'img' } });
  await none.close();

  const logDir = await hostingFolder(t);
  const seen: string[] = [];
  const own = await openTenantEgress(operator, {
    tenant: 'a',
    allow: ['a.test'],
    hosts: { 'a.test': '10.0.0.1' },
    logDir,
    onEvent: (tenant, event) => seen.push(`${tenant}:${event.action}:${event.host}`),
  });
  const egress = (own.options.docker as { egress: { allow: string[]; hosts: unknown; logFile: string; onEvent?: unknown } }).egress;
  t.deepEqual(egress.allow, ['a.test']);
  t.deepEqual(egress.hosts, { 'a.test': '10.0.0.1' });
  t.is(egress.onEvent, undefined, 'nothing that cannot cross into the shell thread');
  t.true(egress.logFile.startsWith(`${logDir}/a-`), egress.logFile);
  // As the proxy appends (in the shell thread): whole lines, the last one in two writes.
  const line = (host: string, action = 'refused') =>
    JSON.stringify({ time: 'x', client: '10.0.0.2', action, via: 'http', host, port: 80, reason: 'not in the list' });
  await appendFile(egress.logFile, `${line('one.test', 'allowed')}\n${line('two.test')}\n${line('thré.test').slice(0, 40)}`);
  await appendFile(egress.logFile, `${line('thré.test').slice(40)}\nnot json\n`);
  await own.close();
  t.deepEqual(seen, ['a:allowed:one.test', 'a:refused:two.test', 'a:refused:thré.test']);
  await t.throwsAsync(stat(egress.logFile), undefined, 'the event file is removed on close');
});

test('tenant add --policy and --network-allow: checked, stored, replaced on a later add, shown by list', async (t) => {
  const dir = await hostingFolder(t);
  const file = join(dir, 'tenants.json');
  const policy = join(dir, 'acme.toml');
  await writeFile(policy, DENY_RM);
  await addTenant(file, 'acme', ['--policy', policy, '--network-allow', 'allowed.test:8080', '--network-allow', '*.pythonhosted.org']);
  const stored = () => readFile(file, 'utf8').then((text) => (JSON.parse(text) as TenantsFile).tenants['acme']!);
  t.like(await stored(), { policies: [policy], network: { allow: ['allowed.test:8080', '*.pythonhosted.org'] } });
  await addTenant(file, 'acme', ['--limit', 'sessions=1']);
  t.like(await stored(), { policies: [policy], network: { allow: ['allowed.test:8080', '*.pythonhosted.org'] } }, 'kept when not given');
  await addTenant(file, 'acme', ['--network-allow', 'other.test']);
  t.like(await stored(), { network: { allow: ['other.test'] } }, 'replaced when given');

  const list = await runCli(['tenant', 'list', '--tenants', file]);
  t.regex(list.stdout, new RegExp(`policy ${policy}`));
  t.regex(list.stdout, /network allow other\.test/);
  const json = JSON.parse((await runCli(['tenant', 'list', '--json', '--tenants', file])).stdout) as { tenants: unknown[] };
  t.like(json.tenants[0], { policies: [policy], network: ['other.test'] });

  const before = await readFile(file, 'utf8');
  await writeFile(join(dir, 'bad.toml'), '[[rule]]\ndecision = "maybe"\ntoolName = "x"\n');
  const bad = await runCli(['tenant', 'add', 'acme', '--tenants', file, '--policy', join(dir, 'bad.toml')]);
  t.is(bad.code, 2);
  t.is(bad.stdout, '', 'no key is printed for a refused add');
  t.regex(bad.stderr, /Invalid policy file .*bad\.toml: rule 1: decision must be allow, deny or ask_user/);
  const missing = await runCli(['tenant', 'add', 'acme', '--tenants', file, '--policy', join(dir, 'none.toml')]);
  t.regex(missing.stderr, /none\.toml: the file does not exist/);
  const host = await runCli(['tenant', 'add', 'acme', '--tenants', file, '--network-allow', 'http://x']);
  t.is(host.code, 2);
  t.regex(host.stderr, /--network-allow: .*http:\/\/x/);
  t.is(await readFile(file, 'utf8'), before, 'a refused add leaves the file as it was');

  const help = await runCli(['tenant', 'add', '--help']);
  t.regex(help.stdout, /--policy <file>/);
  t.regex(help.stdout, /--network-allow <entry>/);
  t.regex(help.stdout, /operator deny always holds/);
});
