import test from 'ava';
import { utimesSync, writeFileSync } from 'node:fs';
import { createRuntime } from '../../src/runtime/runtime.js';
import { useTempWorkspace } from '../helpers/workspace.js';

const DAY = 24 * 60 * 60 * 1000;

function age(path: string, days: number): void {
  const when = new Date(Date.now() - days * DAY);
  utimesSync(path, when, when);
}

test('createRuntime deletes saved outputs past tools.savedOutputRetentionDays, and keeps them all with 0', async (t) => {
  const ws = useTempWorkspace(t);
  const settingsFile = ws.path('../settings.json');
  const start = async (days?: number) => {
    writeFileSync(settingsFile, JSON.stringify({ tools: days === undefined ? {} : { savedOutputRetentionDays: days } }));
    const runtime = await createRuntime({ workspace: ws.root, settingsFile, sandbox: 'none', pool: { threads: 1 } });
    await runtime.close();
  };
  age(ws.write('.toolcell/tool-outputs/run_shell_command-1.txt', 'old'), 10);
  ws.write('.toolcell/tool-outputs/run_shell_command-2.txt', 'recent');
  await start(0);
  t.is(ws.list('.toolcell/tool-outputs').length, 2, '0 keeps everything');
  await start();
  t.deepEqual(ws.list('.toolcell/tool-outputs'), ['run_shell_command-2.txt'], 'the default of 7 days deletes the 10-day-old output');
});
