import test from 'ava';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/load-settings.js';
import { HOSTING_DRAIN_BYTES_PER_SECOND, hostingShellOptions } from '../../src/hosting/hosting-shell-options.js';

test("a hosting server drains floods slowly and keeps the operator's limits, never its egress", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-hosting-shell-options-'));
  const settingsFile = join(dir, 'settings.json');
  await writeFile(settingsFile, JSON.stringify({ sandbox: { network: { allow: ['example.com'] } }, shell: { savedOutputMaxBytes: 1 << 20 } }));
  const options = hostingShellOptions(loadSettings({ workspace: dir, settingsFile, homeDir: dir }));
  t.is(options.drainBytesPerSecond, HOSTING_DRAIN_BYTES_PER_SECOND);
  t.true(HOSTING_DRAIN_BYTES_PER_SECOND > 0);
  t.is(options.savedOutputMaxBytes, 1 << 20);
  t.false('egress' in (options.docker ?? {}), "the operator's sandbox.network reaches no tenant");
});
