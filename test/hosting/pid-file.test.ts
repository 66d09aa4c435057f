import anyTest from 'ava';
import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readAuditLines } from '../helpers/audit-log.js';
import { runCli } from '../helpers/cli.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import { addTenant, hostingFolder } from '../helpers/hosting.js';
import { releaseLeftDisks, startCliServer } from '../helpers/hosting-cli.js';

/**
 * The README's logrotate example sends SIGHUP to the pid in a file: `serve
 * --tenants … --pid-file FILE` writes it once it listens and removes it when
 * it stops.
 */
const test = (await requireDocker(anyTest, 'hosting/pid-file')).serial;

test("--pid-file holds the server's pid while it serves: the logrotate example's kill -HUP reopens the audit log; removed at exit", async (t) => {
  const dir = await hostingFolder(t, 'toolcell-pid-file-');
  const file = join(dir, 'tenants.json');
  const dataDir = join(dir, 'data');
  const audit = join(dir, 'audit.jsonl');
  const pidFile = join(dir, 'run', 'toolcell.pid');
  await addTenant(file, 'acme');
  releaseLeftDisks(t, dataDir, ['acme']);
  await mkdir(join(dir, 'run'));
  const server = await startCliServer(t, ['--tenants', file, '--data-dir', dataDir, '--audit', audit, '--pid-file', pidFile]);
  t.is(await readFile(pidFile, 'utf8'), `${server.pid}\n`);
  t.is((await stat(pidFile)).mode & 0o777, 0o644);

  // postrotate: kill -HUP "$(cat /run/toolcell.pid)"
  await rename(audit, `${audit}.1`);
  process.kill(Number((await readFile(pidFile, 'utf8')).trim()), 'SIGHUP');
  await fetch(server.url, { method: 'POST', headers: { authorization: 'Bearer tc_wrong_key' } });
  t.true(
    await eventually(async () => (await readAuditLines(audit).catch(() => [])).some((line) => line['event'] === 'auth_failure'), 30_000),
    'the reopened log got the next event',
  );

  t.like(await server.stop('SIGTERM'), { code: 0 });
  await t.throwsAsync(stat(pidFile), { code: 'ENOENT' });
});

test('--pid-file needs --tenants', async (t) => {
  const result = await runCli(['serve', '--http', '127.0.0.1:0', '--pid-file', '/tmp/x.pid']);
  t.is(result.code, 2);
  t.regex(result.stderr, /--pid-file needs --tenants FILE/);
});
