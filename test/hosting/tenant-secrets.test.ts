/**
 * A tenant's secret on a real hosting server (real Docker, the SDK client):
 * its commands get it, and it is in none of what leaves the server: MCP
 * results (a command's output, a file read back), progress, the audit log,
 * the admin's session list; another tenant's commands do not have it; a
 * server without the key refuses the tenant's sessions and tells only the
 * operator.
 */
import anyTest from 'ava';
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditLog } from '../../src/hosting/audit/audit-log.js';
import { combineObservers } from '../../src/hosting/operations/combine-observers.js';
import { RecordingObserver } from '../helpers/hosting.js';
import { runCli } from '../helpers/cli.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, startHosting } from '../helpers/hosting.js';

const test = (await requireDocker(anyTest, 'hosting/tenant-secrets')).serial;

const VALUE = 'acme-Registry-T0ken/7f3a+9c=';
const SHA = createHash('sha256').update(VALUE).digest('hex');

test("the tenant's commands have its secret; nothing the server sends, logs or lists holds it; another tenant does not have it", async (t) => {
  const dir = await hostingFolder(t, 'toolcell-tenant-secrets-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const keys = { acme: await addTenant(file, 'acme'), globex: await addTenant(file, 'globex') };
  const set = await runCli(['tenant', 'secret', 'set', 'acme', 'REGISTRY_TOKEN', '--tenants', file, '--data-dir', dataDir], { input: VALUE });
  t.is(set.code, 0, set.stderr);
  const auditFile = join(dir, 'audit.jsonl');
  const audit = await AuditLog.open({ path: auditFile });
  const observer = new RecordingObserver();
  const logs: string[] = [];
  const hosting = await startHosting({ tenantsFile: file, dataDir, observer: combineObservers(audit, observer), onLog: (line) => logs.push(line) });
  t.teardown(async () => {
    await hosting.close();
    await audit.close();
  });

  const acme = await connectTenant(t, hosting.server.url, keys.acme);
  const has = await call(acme.client, 'run_shell_command', { command: 'printf %s "$REGISTRY_TOKEN" | sha256sum' });
  t.regex(has.text, new RegExp(SHA), 'the command got the value');
  const progress: string[] = [];
  const echoed = await acme.client.callTool(
    {
      name: 'run_shell_command',
      arguments: { command: 'echo "token=$REGISTRY_TOKEN"; echo "$REGISTRY_TOKEN" | base64; echo "$REGISTRY_TOKEN" > kept.txt; sleep 1.5' },
    },
    undefined,
    { onprogress: (update) => progress.push(update.message ?? '') },
  );
  const echoedText = JSON.stringify(echoed);
  t.regex(echoedText, /token=\[REDACTED:REGISTRY_TOKEN\]/);
  const readBack = await call(acme.client, 'read_file', { file_path: 'kept.txt' });
  t.is(readBack.text.trim(), '[REDACTED:REGISTRY_TOKEN]');
  // The model writes what it guessed into an argument: the audit line redacts it.
  await call(acme.client, 'run_shell_command', { command: `echo guessed ${VALUE} > /dev/null` });

  const globex = await connectTenant(t, hosting.server.url, keys.globex);
  const other = await call(globex.client, 'run_shell_command', { command: 'echo "other=[$REGISTRY_TOKEN]"; env | grep -c REGISTRY_TOKEN' });
  t.regex(other.text, /other=\[\]/);

  await observer.waitFor((event) => event.event === 'tool_call' && event.tenant === 'globex');
  const sessions = JSON.stringify(hosting.server.listSessions());
  const auditText = await readFile(auditFile, 'utf8');
  for (const [label, text] of [
    ['result', echoedText],
    ['read back', readBack.text],
    ['progress', progress.join('\n')],
    ['audit log', auditText],
    ['sessions', sessions],
    ['server log', logs.join('\n')],
  ] as const) {
    t.false(text.includes(VALUE), label);
    t.false(text.includes(Buffer.from(VALUE).toString('base64').slice(0, 16)), `${label} (base64)`);
  }
  t.regex(auditText, /guessed \[REDACTED:REGISTRY_TOKEN\]/);
});

test("without the server's secrets key, the tenant's sessions are refused and only the operator is told why", async (t) => {
  const dir = await hostingFolder(t, 'toolcell-tenant-secrets-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const key = await addTenant(file, 'acme');
  t.is((await runCli(['tenant', 'secret', 'set', 'acme', 'REGISTRY_TOKEN', '--tenants', file, '--data-dir', dataDir], { input: VALUE })).code, 0);
  await rm(join(dataDir, 'secrets.key'));
  const logs: string[] = [];
  const hosting = await startHosting({ tenantsFile: file, dataDir, onLog: (line) => logs.push(line) });
  t.teardown(() => hosting.close());
  const error = await t.throwsAsync(connectTenant(t, hosting.server.url, key));
  t.regex(String(error?.message), /secrets are not available/);
  t.notRegex(String(error?.message), /secrets\.key|data/);
  t.true(
    logs.some((line) => /tenant acme: There is no secrets key .*secrets\.key/.test(line)),
    logs.join('\n'),
  );
});
