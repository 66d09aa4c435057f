/**
 * `web_fetch` fetches on the host, not through the sandbox's proxy: its
 * connections must still reach ~/.toolcell/egress.log as the proxy's do
 * (README: every allowed and refused connection is logged).
 */
import test from 'ava';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';

test('toolcell exec: each web_fetch connection, allowed, refused and redirected, is a line of ~/.toolcell/egress.log', async (t) => {
  const site = createServer((req, res) => {
    if (req.url === '/hop') return void res.writeHead(302, { location: '/page' }).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('the page');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  t.teardown(() => site.close());
  const port = (site.address() as AddressInfo).port;
  const home = await mkdtemp(join(tmpdir(), 'toolcell-home-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const settings = join(home, 'settings.json');
  await writeFile(settings, JSON.stringify({ sandbox: { network: { allow: [`127.0.0.1:${port}`] } } }));
  const calls = [{ name: 'web_fetch', args: { prompt: `Read http://127.0.0.1:${port}/hop and http://127.0.0.1:${port + 1}/x` } }];
  const result = await runCli(['exec', '--workspace', home, '--settings', settings, '--approval', 'yolo', '--json'], {
    input: JSON.stringify(calls),
    env: { HOME: home },
  });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /the page/);
  const lines = (await readFile(join(home, '.toolcell', 'egress.log'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const allowed = lines.filter((line) => line['action'] === 'allowed');
  t.is(allowed.length, 2, 'the URL and its redirect hop');
  t.true(allowed.every((line) => line['via'] === 'web_fetch' && line['client'] === 'host' && line['port'] === port && line['entry'] === `127.0.0.1:${port}`));
  t.like(
    lines.find((line) => line['action'] === 'refused'),
    { via: 'web_fetch', host: '127.0.0.1', port: port + 1, reason: 'IP address not in sandbox.network.allow' },
  );
});
