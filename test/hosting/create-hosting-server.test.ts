/**
 * Hosting as a library: a program hosts a tenant through createHostingServer
 * alone (no CLI, no HostingServer wiring of its own), and the MCP SDK's own
 * client, signed in with the tenant's key, runs a command in the tenant's
 * container over real HTTP; closing it removes the container.
 */
import anyTest from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHostingServer } from '../../src/hosting/index.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, toolcellContainersUnder } from '../helpers/hosting.js';
import { testSandboxRuntime } from '../helpers/test-runtime.js';

const test = (await requireDocker(anyTest, 'hosting/create-hosting-server')).serial;

test('createHostingServer hosts a tenant from its tenants file: its key opens a session whose command runs in its container', async (t) => {
  const dir = await hostingFolder(t);
  const tenants = join(dir, 'tenants.json');
  const key = await addTenant(tenants, 'acme');
  const audit = join(dir, 'audit.jsonl');
  const hosted = await createHostingServer({
    tenants,
    dataDir: join(dir, 'data'),
    http: { port: 0 },
    runtime: { approvalMode: 'yolo', ...testSandboxRuntime() },
    operations: { audit },
    diskCap: false,
  });
  t.teardown(() => hosted.close());
  t.regex(hosted.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const connection = await connectTenant(t, hosted.url, key);
  const result = await call(connection.client, 'run_shell_command', { command: 'echo hosted-by-a-library; pwd' });
  t.is(result.errorType, undefined, result.text);
  t.regex(result.text, /hosted-by-a-library/);
  t.regex(result.text, /\/workspace/);
  t.true((await toolcellContainersUnder(dir)).length > 0, 'the tenant has a container of its own');
  // The operations asked for are wired: the call is in the audit log.
  t.true(await eventually(async () => (await readFile(audit, 'utf8').catch(() => '')).includes(`"tool":"run_shell_command"`)), 'the call is in the audit log');
  await connection.close();
  await hosted.close({ drainMs: 0 });
  t.true(await eventually(async () => (await toolcellContainersUnder(dir)).length === 0), 'closing removed its container');
});

test('a bad option is refused naming it, and nothing is left open', async (t) => {
  const dir = await hostingFolder(t);
  const tenants = join(dir, 'tenants.json');
  await addTenant(tenants, 'acme');
  await t.throwsAsync(createHostingServer({ tenants, dataDir: 'relative/data', http: { port: 0 } }), {
    instanceOf: TypeError,
    message: /createHostingServer: options\.dataDir must be an absolute path/,
  });
  await t.throwsAsync(createHostingServer({ tenants, dataDir: join(dir, 'data'), http: { port: 70_000 } }), {
    instanceOf: RangeError,
    message: /options\.http\.port must be at most 65535/,
  });
  await t.throwsAsync(createHostingServer({ tenants, dataDir: join(dir, 'data'), http: { port: 0 }, operations: { auditLog: 'x' } } as never), {
    instanceOf: TypeError,
    message: /options\.operations\.auditLog is not a known option/,
  });
  await t.throwsAsync(createHostingServer({ tenants, dataDir: join(dir, 'data'), http: { port: 0 }, operations: { oidcIssuer: 'https://issuer.example' } }), {
    instanceOf: TypeError,
    message: /^createHostingServer: options\.operations\.publicUrl must be given with oidcIssuer/,
  });
});
