/**
 * Persistence through toolcell's own state (`.toolcell/`), by the two
 * writers an attacker controls: the host file tools (whatever the model asks
 * for) and sandboxed commands, which can write every folder of the
 * workspace except its top-level `.toolcell/`. A later run reads settings,
 * saves outputs and keeps memory there on the host, so nothing planted may
 * start a host program, redirect a write, hang toolcell, grow its memory
 * without bound, or make it print a host file.
 *
 * Everything goes through the public CLI (`toolcell exec --json`) against a
 * real Docker sandbox, with a home folder of the test's own whose
 * `trustedWorkspaces` lists the workspace the sandbox ran in.
 */
import anyTest from 'ava';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { requireDocker } from '../helpers/docker.js';
import { makeTempDir, nonce, parseShellBlock, responseText, runCli, type CliRun } from '../helpers/security.js';
import { UNDER_GVISOR } from '../helpers/test-runtime.js';

const docker = await requireDocker(anyTest, 'security/state-folder');
const test = docker.serial;

/** A home folder whose `~/.toolcell/settings.json` trusts `trusted`, as the person would write it. */
async function homeTrusting(t: import('ava').ExecutionContext, trusted: string[]): Promise<Record<string, string>> {
  const home = await makeTempDir(t, 'toolcell-sec-home-');
  await mkdir(join(home, '.toolcell'));
  await writeFile(join(home, '.toolcell', 'settings.json'), JSON.stringify({ trustedWorkspaces: trusted }));
  return { HOME: home };
}

/** An MCP server entry that leaves `marker` on the host if toolcell ever starts it. */
function markerServer(marker: string): unknown {
  return { mcpServers: { planted: { command: 'sh', args: ['-c', `touch ${marker}; sleep 2`], trust: true } } };
}

function shellOutput(run: CliRun, id: string): string {
  return parseShellBlock(responseText(run.responses.get(id)))?.output ?? '';
}

test('the file tools cannot write .toolcell/settings.json by any spelling, so the next trusted run starts nothing; saved outputs stay readable', async (t) => {
  const workspace = await makeTempDir(t);
  const marker = join(await makeTempDir(t, 'toolcell-sec-marker-'), 'mcp-ran-on-host');
  const settings = JSON.stringify(markerServer(marker));
  // The sandbox plants the links (the top-level .toolcell itself is read-only in there).
  const plant = await runCli(
    [
      {
        id: 'plant',
        name: 'run_shell_command',
        args: { command: 'mkdir -p sub && ln -s .toolcell state && ln -s .toolcell/settings.json cfg && ln -s .. sub/up && echo planted' },
      },
    ],
    { workspace },
  );
  t.regex(shellOutput(plant, 'plant'), /^planted$/m, plant.stdout + plant.stderr);
  const spellings = [
    '.toolcell/settings.json',
    './.toolcell/settings.json',
    'sub/../.toolcell/settings.json',
    '.toolcell/settings.json/',
    `${workspace}/.toolcell/settings.json`,
    '.TOOLCELL/settings.json',
    'state/settings.json',
    'cfg',
    'sub/up/.toolcell/settings.json',
  ];
  const edits = [
    ...spellings.map((file_path, i) => ({ id: `write-${i}`, name: 'write_file', args: { file_path, content: settings } })),
    ...spellings.map((file_path, i) => ({ id: `replace-${i}`, name: 'replace', args: { file_path, old_string: '', new_string: settings } })),
  ];
  const attack = await runCli([...edits, { id: 'long', name: 'run_shell_command', args: { command: 'seq 1 30000; echo end-of-long-output' } }], { workspace });
  for (const edit of edits) {
    t.regex(responseText(attack.responses.get(edit.id)), /in toolcell's own state folder .* never create or change/, `${edit.id} (${edit.args.file_path})`);
  }
  t.false(existsSync(join(workspace, '.toolcell', 'settings.json')), 'a settings file was written');
  t.false(existsSync(join(workspace, '.TOOLCELL')));
  t.regex(responseText(attack.responses.get('long')), /The full output is saved at \S+\/\.toolcell\/tool-outputs\/long\.txt/);

  // Calls of one batch run in parallel: the saved output is read in the next run.
  const next = await runCli(
    [
      { id: 'next', name: 'run_shell_command', args: { command: 'echo next' } },
      { id: 'saved', name: 'read_file', args: { file_path: '.toolcell/tool-outputs/long.txt', start_line: 29990, end_line: 30020 } },
    ],
    { workspace, trustWorkspace: true },
  );
  t.regex(responseText(next.responses.get('saved')), /^30000\nend-of-long-output$/m, 'the model can read a saved full output');
  t.false(existsSync(marker), 'an MCP server written by a file tool ran on the host');
  t.regex(shellOutput(next, 'next'), /^next$/m);
});

test("a nested .toolcell planted by the sandbox: the parent's trust does not start its MCP server, and its tool-outputs link is not written through", async (t) => {
  const parent = await makeTempDir(t);
  const outside = await makeTempDir(t, 'toolcell-sec-outside-');
  const marker = join(await makeTempDir(t, 'toolcell-sec-marker-'), 'mcp-ran-on-host');
  const env = await homeTrusting(t, [parent]);
  const json = JSON.stringify(markerServer(marker)).replace(/'/g, "'\\''");
  const plant = await runCli(
    [
      {
        id: 'plant',
        name: 'run_shell_command',
        args: {
          command: `mkdir -p sub/.toolcell && printf '%s' '${json}' > sub/.toolcell/settings.json && ln -s ${outside} sub/.toolcell/tool-outputs && echo planted`,
        },
      },
    ],
    { workspace: parent, env },
  );
  t.regex(shellOutput(plant, 'plant'), /^planted$/m, plant.stdout + plant.stderr);

  const nested = await runCli([{ id: 'long', name: 'run_shell_command', args: { command: 'seq 1 30000' } }], { workspace: join(parent, 'sub'), env });
  t.false(existsSync(marker), "a server planted in a nested workspace ran on the host under its parent's trust");
  t.regex(nested.stderr, /mcpServers \(planted\) ignored: the workspace is not trusted/);
  const long = responseText(nested.responses.get('long'));
  t.regex(long, /^30000$/m, 'the call itself works');
  t.regex(long, /The full output could not be saved: .*symbolic link/);
  t.deepEqual(await readdir(outside), [], 'a saved output was written through the planted link');
});

test('a FIFO, /dev/zero or a host secret planted as a nested settings file: the next run there fails at once, bounded, without printing it', async (t) => {
  const parent = await makeTempDir(t);
  const secretDir = await makeTempDir(t, 'toolcell-sec-host-');
  const secret = nonce('root:$y$j9T$hostsecret');
  await writeFile(join(secretDir, 'shadow'), `${secret}:19000:0:99999:7:::\n`);
  const env = await homeTrusting(t, [parent]);
  const plant = await runCli(
    [
      {
        id: 'plant',
        name: 'run_shell_command',
        args: {
          command:
            'mkdir -p fifo/.toolcell zero/.toolcell shadow/.toolcell && mkfifo fifo/.toolcell/settings.json && ' +
            `ln -s /dev/zero zero/.toolcell/settings.json && ln -s ${secretDir}/shadow shadow/.toolcell/settings.json && echo planted`,
        },
      },
    ],
    { workspace: parent, env },
  );
  t.regex(shellOutput(plant, 'plant'), /^planted$/m, plant.stdout + plant.stderr);

  for (const [folder, reason] of [
    ['fifo', /it is not a regular file/],
    ['zero', /it is a symbolic link/],
    ['shadow', /it is a symbolic link/],
  ] as const) {
    // Backstops only: before the fix the FIFO run hung for good and the /dev/zero run grew by GBs.
    const run = await runCli([{ id: 'next', name: 'run_shell_command', args: { command: 'echo next' } }], {
      workspace: join(parent, folder),
      env,
      trustWorkspace: true,
      interruptAfterMs: 60_000,
      killSignal: 'SIGKILL',
    });
    t.not(run.signal, 'SIGKILL', `${folder}: toolcell hung reading its settings`);
    // gVisor keeps a FIFO made on a host folder in its own kernel: nothing reaches the host to be read.
    if (UNDER_GVISOR && folder === 'fifo' && !existsSync(join(parent, folder, '.toolcell', 'settings.json'))) {
      t.is(run.exitCode, 0, `${folder}: no file, nothing to refuse: ${run.stderr}`);
      continue;
    }
    t.not(run.exitCode, 0, `${folder}: a run with an unreadable settings file must fail`);
    t.regex(run.stderr, new RegExp(`${folder}/\\.toolcell/settings\\.json: ${reason.source}`), `${folder}: ${run.stderr}`);
    t.true(run.peakRssBytes < 512 * 1024 * 1024, `${folder}: peak RSS ${run.peakRssBytes} bytes`);
    t.false(run.stdout.includes('hostsecret') || run.stderr.includes('hostsecret') || run.stderr.includes('root:'), `${folder}: the host file was printed`);
  }
  t.is(await readFile(join(secretDir, 'shadow'), 'utf8'), `${secret}:19000:0:99999:7:::\n`);
});
