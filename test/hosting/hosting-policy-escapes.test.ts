/**
 * Issue 22 §1's escapes against a real hosting server whose operator policy
 * denies `rm` (approval yolo, real Docker, the SDK client): for each, the
 * tenant writes victim.txt, sends the command, and finds the file still
 * there; the refusal names the rule in the tenant's terms.
 */
import anyTest from 'ava';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { ESCAPES } from '../fixtures/policy/escapes.js';
import { addTenant, call, connectTenant, hostingFolder, startHosting } from '../helpers/hosting.js';

const test = await requireDocker(anyTest, 'hosting/policy-escapes');

test("no escape gets past the operator's deny rule on a hosting server, in yolo", async (t) => {
  t.timeout(600_000);
  const dir = await hostingFolder(t, 'toolcell-policy-escapes-');
  const file = join(dir, 'tenants.json');
  const key = await addTenant(file, 'acme');
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data'), policy: [{ name: 'no-rm', commandPrefix: 'rm', decision: 'deny' }] });
  t.teardown(() => hosting.close());
  const { client } = await connectTenant(t, hosting.server.url, key);
  // The control: commands without rm run, so a refusal below is the policy's.
  t.regex((await call(client, 'run_shell_command', { command: 'echo ok > victim.txt && cat victim.txt' })).text, /ok/);
  for (const escape of ESCAPES) {
    await call(client, 'write_file', { file_path: 'victim.txt', content: 'still here' });
    const result = await call(client, 'run_shell_command', { command: escape.command });
    const expected = escape.expected === 'denied' ? 'policy_denied' : 'confirmation_required';
    t.is(result.errorType, expected, `${escape.name}: ${result.text}`);
    if (escape.expected === 'denied') t.true(result.text.includes(`the operator's policy, rule 1 ("no-rm")`), result.text);
    t.is((await call(client, 'read_file', { file_path: 'victim.txt' })).text.trim(), 'still here', `${escape.name} did not run`);
  }
});
