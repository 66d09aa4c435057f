/**
 * Per-tenant policy and egress on a real hosting server (real Docker, real
 * HTTP, the SDK client, no internet). Tenants made with `toolcell tenant add`:
 * - alpha: `--network-allow allowed.test:PORT` and a policy file that denies
 *   `rm`, asks for `touch` and "allows" the operator-denied `shred`;
 * - beta: no list, no policy file;
 * - gamma: its own list (other.test).
 * The operator's policy denies `shred`. The proxies resolve the test names
 * to this host's bridge address, where a local HTTP server answers.
 */
import anyTest, { type TestFn } from 'ava';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiKeyAuthenticator } from '../../src/hosting/auth/api-key.js';
import { AuditLog } from '../../src/hosting/audit/audit-log.js';
import { combineObservers } from '../../src/hosting/operations/combine-observers.js';
import { HostingServer } from '../../src/hosting/server/hosting-server.js';
import { TenantStore } from '../../src/hosting/tenants/tenant-store.js';
import { createRuntime, type Runtime } from '../../src/runtime/runtime.js';
import { requireDocker } from '../helpers/docker.js';
import { startHttpServer, type TestWebServer } from '../helpers/egress-servers.js';
import { addTenant, call, connectAs, hostingFolder, RecordingObserver } from '../helpers/hosting.js';

interface Context {
  server: HostingServer;
  store: TenantStore;
  runtime: Runtime;
  audit: AuditLog;
  auditFile: string;
  observer: RecordingObserver;
  web: TestWebServer;
  keys: Record<'alpha' | 'beta' | 'gamma', string>;
  tenantPolicy: string;
  tenantsFile: string;
}

const test = (await requireDocker(anyTest as TestFn<Context>, 'hosting/tenant-policy-egress')).serial;
const BRIDGE_HOST = '172.17.0.1';
const execFileAsync = promisify(execFile);

anyTest.before(async (t) => {
  const context = t.context as Context;
  const dir = await hostingFolder({ teardown: () => {} }, 'toolcell-tenant-egress-');
  const web = await startHttpServer({ host: '0.0.0.0', name: 'web' });
  const tenantPolicy = join(dir, 'alpha.toml');
  await writeFile(
    tenantPolicy,
    [
      '[[rule]]\nname = "no-rm"\ncommandPrefix = "rm"\ndecision = "deny"\npriority = 5\n',
      '[[rule]]\nname = "ask-touch"\ncommandPrefix = "touch"\ndecision = "ask_user"\n',
      '[[rule]]\nname = "tenant-allows-shred"\ncommandPrefix = "shred"\ndecision = "allow"\npriority = 1000\n',
    ].join('\n'),
  );
  const file = join(dir, 'tenants.json');
  // The bridge address is private: only an IP entry lets the proxy connect to it (see AllowList).
  const keys = {
    alpha: await addTenant(file, 'alpha', [
      '--policy',
      tenantPolicy,
      '--network-allow',
      `allowed.test:${web.port}`,
      '--network-allow',
      `${BRIDGE_HOST}:${web.port}`,
    ]),
    beta: await addTenant(file, 'beta'),
    gamma: await addTenant(file, 'gamma', ['--network-allow', `other.test:${web.port}`, '--network-allow', `${BRIDGE_HOST}:${web.port}`]),
  };
  const store = await TenantStore.open({ file, pollMs: 200 });
  const runtime = await createRuntime({
    workspace: dir,
    approvalMode: 'yolo',
    sandbox: 'docker',
    onWarning: () => {},
    policy: [{ name: 'op-no-shred', commandPrefix: 'shred', decision: 'deny' }],
  });
  const auditFile = join(dir, 'audit.jsonl');
  const audit = await AuditLog.open({ path: auditFile });
  const observer = new RecordingObserver();
  const server = await HostingServer.start({
    store,
    runtime,
    authenticators: [new ApiKeyAuthenticator(store)],
    observer: combineObservers(audit, observer),
    dataDir: join(dir, 'data'),
    port: 0,
    egressHosts: { 'allowed.test': BRIDGE_HOST, 'denied.test': BRIDGE_HOST, 'other.test': BRIDGE_HOST },
  });
  Object.assign(context, { server, store, runtime, audit, auditFile, observer, web, keys, tenantPolicy, tenantsFile: file });
});

anyTest.after.always(async (t) => {
  const context = t.context as Partial<Context>;
  await context.server?.close();
  context.store?.close();
  await context.runtime?.close();
  await context.audit?.close();
  await context.web?.close();
});

async function connect(t: { context: Context; teardown(fn: () => Promise<void>): void }, tenant: keyof Context['keys']) {
  const connection = await connectAs(t.context.server.url, t.context.keys[tenant]);
  t.teardown(() => connection.close());
  return connection;
}

/** The container a session's commands run in: its hostname is the container id. */
async function networksOf(client: Awaited<ReturnType<typeof connect>>['client']): Promise<{ mode: string; networks: string[] }> {
  const id = (await call(client, 'run_shell_command', { command: 'hostname' })).text.match(/\b([0-9a-f]{12})\b/)![1]!;
  const { stdout } = await execFileAsync('docker', ['inspect', '--format', '{{json .HostConfig.NetworkMode}} {{json .NetworkSettings.Networks}}', id]);
  const [mode, networks] = stdout.trim().split(' ', 2) as [string, string];
  return { mode: JSON.parse(mode) as string, networks: Object.keys(JSON.parse(networks) as Record<string, unknown>) };
}

const curl = (host: string, port: number) => ({ command: `curl -sS -m 10 http://${host}:${port}/ 2>&1; echo curl=$?` });

test('a tenant with an allow list reaches it, and nothing else; a tenant without one has no network', async (t) => {
  const { web } = t.context;
  const alpha = await connect(t, 'alpha');
  const allowed = await call(alpha.client, 'run_shell_command', curl('allowed.test', web.port));
  t.regex(allowed.text, /hello from web/, allowed.text);
  const denied = await call(alpha.client, 'run_shell_command', curl('denied.test', web.port));
  t.notRegex(denied.text, /hello from web/);
  t.regex(denied.text, new RegExp(`network: refused denied\\.test:${web.port}`), denied.text);
  // In the tenant's terms: its list is the operator's to keep, not a setting it has.
  t.true(denied.text.includes(`denied.test:${web.port}, not in this tenant's network allow list (kept by the server's operator)`), denied.text);
  t.notRegex(denied.text, /sandbox\.network/);

  const beta = await connect(t, 'beta');
  const before = web.hits;
  const none = await call(beta.client, 'run_shell_command', {
    command: `curl -sS -m 5 http://${BRIDGE_HOST}:${web.port}/ 2>&1; echo curl=$?; echo "proxy=[$HTTP_PROXY]"`,
  });
  t.notRegex(none.text, /hello from web|curl=0\b/, none.text);
  t.regex(none.text, /proxy=\[\]/);
  t.is(web.hits, before, "beta's request reached nothing");

  const gamma = await connect(t, 'gamma');
  const other = await call(gamma.client, 'run_shell_command', curl('other.test', web.port));
  t.regex(other.text, /hello from web/, other.text);
  const notIts = await call(gamma.client, 'run_shell_command', curl('allowed.test', web.port));
  t.regex(notIts.text, new RegExp(`network: refused allowed\\.test:${web.port}`), "alpha's list is not gamma's");
});

test("web_fetch (on the host) is held to the tenant's list, not the operator's", async (t) => {
  const { web } = t.context;
  const alpha = await connect(t, 'alpha');
  const fetched = await call(alpha.client, 'web_fetch', { prompt: `Read http://allowed.test:${web.port}/` });
  t.regex(fetched.text, /hello from web/, fetched.text);
  const beta = await connect(t, 'beta');
  const before = web.hits;
  const refused = await call(beta.client, 'web_fetch', { prompt: `Read http://allowed.test:${web.port}/` });
  t.notRegex(refused.text, /hello from web/, refused.text);
  t.is(web.hits, before);
  // Refusals, and the tool's description, in the tenant's terms rather than the operator's settings.
  t.true(refused.text.includes("not in this tenant's network allow list (kept by the server's operator)"), refused.text);
  t.true(refused.text.includes("This tenant's sandboxes have no network: the server's operator decides which hosts a tenant may reach."), refused.text);
  const unlisted = await call(alpha.client, 'web_fetch', { prompt: `Read http://denied.test:${web.port}/` });
  t.true(unlisted.text.includes(`denied.test:${web.port}, not in this tenant's network allow list`), unlisted.text);
  const { tools } = await alpha.client.listTools();
  const description = tools.find((tool) => tool.name === 'web_fetch')?.description ?? '';
  t.true(description.includes("Only hosts listed in this tenant's network allow list (kept by the server's operator) can be fetched"), description);
  for (const text of [refused.text, unlisted.text, description]) t.notRegex(text, /sandbox\.network/);
});

test("each tenant's containers sit on a network of their own (docker inspect)", async (t) => {
  const alpha = await networksOf((await connect(t, 'alpha')).client);
  const alphaAgain = await networksOf((await connect(t, 'alpha')).client);
  const beta = await networksOf((await connect(t, 'beta')).client);
  const gamma = await networksOf((await connect(t, 'gamma')).client);
  t.regex(alpha.mode, /^toolcell-egress-/);
  t.deepEqual(alpha.networks, [alpha.mode]);
  t.is(alphaAgain.mode, alpha.mode, "alpha's sessions share alpha's network");
  t.is(beta.mode, 'none');
  t.regex(gamma.mode, /^toolcell-egress-/);
  t.not(gamma.mode, alpha.mode);
});

test('the audit log has each connection as an egress line with the right tenant', async (t) => {
  const { web, observer, auditFile } = t.context;
  const alpha = await connect(t, 'alpha');
  await call(alpha.client, 'run_shell_command', curl('allowed.test', web.port));
  await call(alpha.client, 'run_shell_command', curl('denied.test', web.port));
  await observer.waitFor((event) => event.event === 'egress' && event.action === 'refused' && event.host === 'denied.test');
  const lines = (await readFile(auditFile, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const egress = lines.filter((line) => line['event'] === 'egress');
  t.true(egress.some((line) => line['tenant'] === 'alpha' && line['action'] === 'allowed' && line['host'] === 'allowed.test' && line['port'] === web.port));
  t.true(
    egress.some((line) => line['tenant'] === 'alpha' && line['action'] === 'refused' && line['host'] === 'denied.test' && typeof line['reason'] === 'string'),
  );
  t.true(egress.every((line) => typeof line['time'] === 'string' && typeof line['client'] === 'string'));
  t.false(
    egress.some((line) => line['tenant'] === 'beta' && line['via'] !== 'web_fetch'),
    'beta has no proxy to log anything (its web_fetch refusals are logged)',
  );
  t.true(
    egress.filter((line) => line['host'] === 'other.test').every((line) => line['tenant'] === 'gamma'),
    "gamma's connections carry gamma's name",
  );
});

test("web_fetch's connections are egress lines of the audit log too, with the tenant's name, allowed and refused", async (t) => {
  const { web, observer, auditFile } = t.context;
  const alpha = await connect(t, 'alpha');
  const fetched = await call(alpha.client, 'web_fetch', { prompt: `Read http://allowed.test:${web.port}/ and http://denied.test:${web.port}/` });
  t.regex(fetched.text, /hello from web/, fetched.text);
  await observer.waitFor((event) => event.event === 'egress' && event.via === 'web_fetch' && event.host === 'denied.test');
  const lines = (await readFile(auditFile, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line['event'] === 'egress' && line['via'] === 'web_fetch');
  t.true(lines.some((line) => line['tenant'] === 'alpha' && line['action'] === 'allowed' && line['host'] === 'allowed.test' && line['client'] === 'host'));
  t.true(lines.some((line) => line['tenant'] === 'alpha' && line['action'] === 'refused' && line['host'] === 'denied.test'));
});

test("a tenant's policy file refuses its calls naming the rule; another tenant is not affected", async (t) => {
  const { tenantPolicy, observer } = t.context;
  const alpha = await connect(t, 'alpha');
  await call(alpha.client, 'write_file', { file_path: 'doomed.txt', content: 'x' });
  const refused = await call(alpha.client, 'run_shell_command', { command: 'ls && rm doomed.txt' });
  t.is(refused.errorType, 'policy_denied', refused.text);
  t.true(refused.text.includes(`your tenant policy, rule 1 ("no-rm")`), refused.text);
  t.false(refused.text.includes(tenantPolicy), 'the denial names no host path');
  t.is((await call(alpha.client, 'read_file', { file_path: 'doomed.txt' })).text.trim(), 'x', 'it was not run');
  const audited = await observer.waitFor((event) => event.event === 'tool_call' && event.errorType === 'policy_denied' && event.tenant === 'alpha');
  t.like(audited, { decision: 'deny', outcome: 'denied' });

  const asked = await call(alpha.client, 'run_shell_command', { command: 'touch new.txt' });
  t.is(asked.errorType, 'confirmation_required', asked.text);
  t.true(asked.text.includes(`your tenant policy, rule 2 ("ask-touch")`), 'nobody can be asked: a refusal naming the rule');
  t.false(asked.text.includes(tenantPolicy), 'the refusal names no host path');

  const beta = await connect(t, 'beta');
  await call(beta.client, 'write_file', { file_path: 'doomed.txt', content: 'x' });
  const ran = await call(beta.client, 'run_shell_command', { command: 'rm doomed.txt && touch new.txt && echo done' });
  t.is(ran.errorType, undefined, ran.text);
  t.regex(ran.text, /done/);
  const betaCall = await observer.waitFor(
    (event) => event.event === 'tool_call' && event.tenant === 'beta' && event.tool === 'run_shell_command' && event.outcome === 'success',
  );
  t.like(betaCall, { decision: 'allow' });
});

test('an operator deny is not undone by a tenant allow at a higher priority', async (t) => {
  const alpha = await connect(t, 'alpha');
  await call(alpha.client, 'write_file', { file_path: 'keep.txt', content: 'kept' });
  const refused = await call(alpha.client, 'run_shell_command', { command: 'shred -u keep.txt' });
  t.is(refused.errorType, 'policy_denied', refused.text);
  t.true(refused.text.includes(`the operator's policy, rule 1 ("op-no-shred")`), refused.text);
  t.is((await call(alpha.client, 'read_file', { file_path: 'keep.txt' })).text.trim(), 'kept');
});

test('a change to the tenants file applies to new sessions: a list and a policy given to beta', async (t) => {
  const { web, store, tenantsFile, tenantPolicy } = t.context;
  await addTenant(tenantsFile, 'beta', [
    '--policy',
    tenantPolicy,
    '--network-allow',
    `allowed.test:${web.port}`,
    '--network-allow',
    `${BRIDGE_HOST}:${web.port}`,
  ]);
  await store.reload();
  t.deepEqual(store.tenant('beta')!.network, [`allowed.test:${web.port}`, `${BRIDGE_HOST}:${web.port}`]);
  const beta = await connect(t, 'beta');
  const reached = await call(beta.client, 'run_shell_command', curl('allowed.test', web.port));
  t.regex(reached.text, /hello from web/, reached.text);
  const refused = await call(beta.client, 'run_shell_command', { command: 'rm -f nothing' });
  t.is(refused.errorType, 'policy_denied', refused.text);
});
