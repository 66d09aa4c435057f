/**
 * A tenant's own sandbox image on a real hosting server: named in the
 * tenants file, built by the operator with `toolcell tenant image build`
 * (never by the server: until then the tenant's commands are refused saying
 * so), then run for the tenant's sessions; other tenants keep toolcell's.
 */
import anyTest from 'ava';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runCli } from '../helpers/cli.js';
import { requireDocker } from '../helpers/docker.js';
import { addTenant, call, connectTenant, hostingFolder, startHosting } from '../helpers/hosting.js';

const test = (await requireDocker(anyTest, 'hosting/tenant-image')).serial;
const run = promisify(execFile);

test("a tenant's image: refused until the operator builds it, then its sessions run it; another tenant does not", async (t) => {
  const dir = await hostingFolder(t, 'toolcell-tenant-image-');
  const file = join(dir, 'tenants.json');
  const marker = `tenant-image-${randomBytes(6).toString('hex')}`;
  const dockerfile = join(dir, 'acme.Dockerfile');
  await writeFile(dockerfile, `ARG TOOLCELL_SANDBOX_IMAGE\nFROM \${TOOLCELL_SANDBOX_IMAGE}\nRUN echo ${marker} > /etc/tenant-marker\n`);
  const keys = { acme: await addTenant(file, 'acme'), globex: await addTenant(file, 'globex') };
  const set = await runCli(['tenant', 'image', 'set', 'acme', dockerfile, '--tenants', file]);
  t.is(set.code, 0, set.stderr);
  const hosting = await startHosting({ tenantsFile: file, dataDir: join(dir, 'data') });
  t.teardown(() => hosting.close());

  const before = await connectTenant(t, hosting.server.url, keys.acme);
  const refused = await call(before.client, 'run_shell_command', { command: 'cat /etc/tenant-marker' });
  t.is(refused.errorType, 'sandbox_image_missing', refused.text);
  t.regex(refused.text, /the operator builds it with `toolcell tenant image build acme`/);

  const built = await runCli(['tenant', 'image', 'build', 'acme', '--tenants', file]);
  t.is(built.code, 0, built.stderr);
  const tag = built.stdout.trim();
  t.regex(tag, /^toolcell-custom:[0-9a-f]{12}$/);
  t.teardown(async () => {
    await hosting.close();
    await run('docker', ['image', 'rm', tag]).catch(() => undefined);
  });
  t.regex(built.stderr, /Step 1\/\d+|step 1\/\d+|building toolcell-custom/i);

  const acme = await connectTenant(t, hosting.server.url, keys.acme);
  const ran = await call(acme.client, 'run_shell_command', { command: 'cat /etc/tenant-marker; id -u' });
  t.regex(ran.text, new RegExp(marker), ran.text);
  t.notRegex(ran.text, /Output: 0\n/);
  const globex = await connectTenant(t, hosting.server.url, keys.globex);
  const other = await call(globex.client, 'run_shell_command', { command: 'cat /etc/tenant-marker 2>&1 || echo none' });
  t.regex(other.text, /none/);
});
