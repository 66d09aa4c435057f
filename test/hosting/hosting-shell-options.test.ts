import test from 'ava';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/load-settings.js';
import { HOSTING_OUTPUT_LIMITS, hostingShellOptions } from '../../src/hosting/tenants/hosting-shell-options.js';

async function settingsWith(content: object) {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-hosting-shell-options-'));
  const settingsFile = join(dir, 'settings.json');
  await writeFile(settingsFile, JSON.stringify(content));
  return { settings: loadSettings({ workspace: dir, settingsFile, homeDir: dir }), sandboxCpus: undefined };
}

test('a hosting server keeps less of each output than a local run, and drains the rest slowly', async (t) => {
  const options = hostingShellOptions(await settingsWith({}));
  t.like(options, { maxOutputBytes: 1 << 20, savedOutputMaxBytes: 8 << 20, drainBytesPerSecond: 8 << 20 });
  t.deepEqual(HOSTING_OUTPUT_LIMITS, { maxOutputBytes: 1 << 20, savedOutputMaxBytes: 8 << 20, drainBytesPerSecond: 8 << 20 });
});

test("the operator's shell settings win over the hosting defaults; its egress reaches no tenant", async (t) => {
  const options = hostingShellOptions(await settingsWith({ sandbox: { network: { allow: ['example.com'] } }, shell: { savedOutputMaxBytes: 100_000 } }));
  t.is(options.savedOutputMaxBytes, 100_000);
  t.is(options.drainBytesPerSecond, HOSTING_OUTPUT_LIMITS.drainBytesPerSecond);
  t.false('egress' in (options.docker ?? {}), "the operator's sandbox.network reaches no tenant");
});

test("the operator's sandbox CPUs (serve --sandbox-cpus) reach every tenant's containers", async (t) => {
  const options = hostingShellOptions({ ...(await settingsWith({})), sandboxCpus: '1' });
  t.is(options.docker?.cpuSet, '1');
  t.false('cpuSet' in (hostingShellOptions(await settingsWith({})).docker ?? {}), 'no CPU set unless the operator names one');
});
