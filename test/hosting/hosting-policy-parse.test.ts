/**
 * A tenant's long commands are judged off the main thread: while the
 * operator's policy splits a stream of 128 KiB commands (each slow to parse),
 * /healthz and another tenant's call answer (real server, real Docker, the
 * SDK client). The proof is an order of events, not a duration: both answer
 * while those commands are still being judged, and before the last of them
 * is answered.
 */
import anyTest from 'ava';
import { join } from 'node:path';
import { MAX_COMMAND_BYTES } from '../../src/contracts/defaults.js';
import { healthzHandler } from '../../src/hosting/health/health-handlers.js';
import { sharedCommandSplitter } from '../../src/policy/split-thread.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, startHosting } from '../helpers/hosting.js';

const test = await requireDocker(anyTest, 'hosting/policy-parse');

/** Just under the cap, with more than 10,000 substitutions: among the slowest lines to parse. */
const HEAVY = `echo ${'`a` '.repeat(Math.floor((MAX_COMMAND_BYTES - 10) / 4))}`;

test("while a tenant's 128 KiB commands are being judged, /healthz and another tenant's call answer", async (t) => {
  t.timeout(300_000);
  const dir = await hostingFolder(t, 'toolcell-policy-parse-');
  const file = join(dir, 'tenants.json');
  const keys = { attacker: await addTenant(file, 'attacker'), victim: await addTenant(file, 'victim') };
  const hosting = await startHosting({
    tenantsFile: file,
    dataDir: join(dir, 'data'),
    policy: [{ name: 'no-rm', commandPrefix: 'rm', decision: 'deny' }],
    // As `toolcell serve` serves it, beside /mcp.
    otherPaths: (req) => (new URL(req.url ?? '/', 'http://localhost').pathname === '/healthz' ? healthzHandler : undefined),
  });
  t.teardown(() => hosting.close());
  const base = hosting.server.url.replace(/\/mcp$/u, '');
  const attacker = await connectTenant(t, hosting.server.url, keys.attacker);
  const victim = await connectTenant(t, hosting.server.url, keys.victim);
  // The victim's container is started first: its later call measures the server, not a container start.
  t.regex((await call(victim.client, 'run_shell_command', { command: 'echo warm' })).text, /warm/);

  const order: string[] = [];
  // As many as a tenant may run at once (concurrentCalls 4).
  const attacks = Array.from({ length: 4 }, (_, i) =>
    call(attacker.client, 'run_shell_command', { command: HEAVY }).then((result) => {
      order.push(`attack ${i}`);
      return result;
    }),
  );
  const splitter = sharedCommandSplitter();
  t.true(await eventually(async () => splitter.busy, 60_000, 5), "the attacker's commands reach the policy's parse threads");

  const health = await fetch(`${base}/healthz`);
  order.push('healthz');
  t.is(health.status, 200);
  const answered = await call(victim.client, 'run_shell_command', { command: 'echo still here' });
  order.push('victim');
  t.regex(answered.text, /still here/);
  t.true(splitter.busy, "both answered while the attacker's commands were still being judged");

  const results = await Promise.all(attacks);
  for (const result of results) {
    // More than 10,000 commands in one line (or past the time budget on a loaded machine): it cannot be judged, and nobody can be asked on a server.
    t.is(result.errorType, 'confirmation_required', result.text);
    t.regex(result.text, /cannot judge .*(more than 10000 commands|took longer than)/);
  }
  const lastAttack = Math.max(...order.map((event, i) => (event.startsWith('attack') ? i : -1)));
  t.true(order.indexOf('healthz') < lastAttack && order.indexOf('victim') < lastAttack, order.join(', '));
});
