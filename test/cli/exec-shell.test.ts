import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execJson, runCli } from '../helpers/cli.js';
import { firstDifferentLine, seqText } from '../helpers/seq-output.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(predicate: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await sleep(50);
  }
  return predicate();
}

test('calls of a batch run in parallel: three commands that each wait for the other two all finish', async (t) => {
  const ws = mkdtempSync(join(tmpdir(), 'toolcell-par-'));
  // Each command marks itself started, then waits (at most 20 s) until all three marks exist:
  // run one at a time, the first would time out instead of printing "met".
  const command = (i: number) =>
    `touch started_${i}; for n in $(seq 400); do [ $(ls started_* | wc -l) -ge 3 ] && { echo met; exit 0; }; sleep 0.05; done; echo alone; exit 1`;
  const { parts } = await execJson(
    ws,
    [0, 1, 2].map((i) => ({ name: 'run_shell_command', args: { command: command(i) } })),
    ['--sandbox', 'none', '--approval', 'yolo'],
  );
  t.is(parts.length, 3);
  for (const part of parts) t.regex(String(part.functionResponse!.response['output']), /met/);
});

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  test(`${signal} during a run cancels the calls, kills their processes, keeps partial output, exits ${code}`, async (t) => {
    const ws = mkdtempSync(join(tmpdir(), 'toolcell-signal-'));
    const calls = [
      { name: 'run_shell_command', args: { command: 'echo $$ > pid1; echo partial-output-one; sleep 300' }, id: 'one' },
      { name: 'run_shell_command', args: { command: '(setsid sleep 300 & echo $! > pid2); echo partial-output-two; sleep 300' }, id: 'two' },
    ];
    let sent = false;
    const result = await runCli(['exec', '--workspace', ws, '--json', '--sandbox', 'none', '--approval', 'yolo'], {
      input: JSON.stringify(calls),
      onSpawn: (pid) => {
        void waitFor(() => existsSync(join(ws, 'pid1')) && existsSync(join(ws, 'pid2')), 30_000).then(async () => {
          await sleep(1_500); // let live output be rendered
          sent = true;
          process.kill(pid, signal);
        });
      },
    });
    t.true(sent);
    t.is(result.code, code);
    const parts = JSON.parse(result.stdout) as Array<{ functionResponse: { id: string; response: Record<string, unknown> } }>;
    t.deepEqual(
      parts.map((p) => p.functionResponse.id),
      ['one', 'two'],
    );
    for (const part of parts) t.regex(String(part.functionResponse.response['error']), /cancel/i);
    t.regex(JSON.stringify(parts[0]!.functionResponse.response), /partial-output-one/);
    const pids = ['pid1', 'pid2'].map((name) => Number(readFileSync(join(ws, name), 'utf8').trim()));
    t.true(await waitFor(() => pids.every((pid) => !alive(pid)), 3_000), `survivors: ${pids.filter(alive).join(', ')}`);
  });
}

test('a 600,000-line command: the model is told its real size and a file holding every line, line N at line N', async (t) => {
  const ws = mkdtempSync(join(tmpdir(), 'toolcell-long-'));
  t.teardown(() => rmSync(ws, { recursive: true, force: true }));
  const { parts } = await execJson(
    ws,
    [{ name: 'run_shell_command', args: { command: 'seq 1 600000' }, id: 'seq' }],
    ['--sandbox', 'none', '--approval', 'yolo'],
  );
  const output = String(parts[0]!.functionResponse!.response['output']);
  const saved = /the whole output was 4088895 bytes in 600000 lines\. The full output is saved at (\S+);/.exec(output)?.[1];
  t.is(saved, join(realpathSync(ws), '.toolcell', 'tool-outputs', 'seq.txt'), output.slice(19_900, 20_400));
  t.is(firstDifferentLine(readFileSync(saved!, 'utf8'), seqText(600_000)), undefined);
  t.true(output.length < 41_000);
});

test('shell calls fail closed with --sandbox auto when the Docker engine does not answer', async (t) => {
  const ws = mkdtempSync(join(tmpdir(), 'toolcell-closed-'));
  const refused = await runCli(['exec', '--workspace', ws, '--json', '--approval', 'yolo', '--sandbox', 'auto'], {
    input: JSON.stringify([{ name: 'run_shell_command', args: { command: 'touch ran-unsandboxed' } }]),
    env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
  });
  t.is(refused.code, 0);
  const response = JSON.parse(refused.stdout)[0].functionResponse.response;
  t.regex(String(response.error), /sandbox|docker/i);
  t.false(existsSync(join(ws, 'ran-unsandboxed')));
});

test('a workspace the sandbox refuses to mount (/) is refused at once, not retried forever', async (t) => {
  const result = await runCli(['exec', '--workspace', '/', '--json', '--approval', 'yolo', '--sandbox', 'docker'], {
    input: JSON.stringify([{ name: 'run_shell_command', args: { command: 'echo hi' } }]),
  });
  t.is(result.code, 0);
  t.regex(String(JSON.parse(result.stdout)[0].functionResponse.response.error), /Refusing to mount \/|sandbox/i);
});
