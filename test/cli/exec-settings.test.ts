/**
 * The workspace's settings reach `toolcell exec` and `toolcell tools`, and
 * the command line wins over them: shell timeouts and the sandbox from
 * settings, `--timeout` for discovered tools too, and `sandbox.mode: "none"`
 * refused from any file.
 */
import anyTest from 'ava';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execJson, runCli } from '../helpers/cli.js';
import { requireDocker } from '../helpers/docker.js';
import { writeDiscoveryScripts } from '../discovery/discovery-scripts.js';

const test = anyTest;
// Awaited before any test is declared (ava requires them synchronous after this).
const docker = await requireDocker(anyTest, 'cli/exec-settings');

async function workspaceWithSettings(settings: unknown): Promise<string> {
  const workspace = await mkdtemp(join(tmpdir(), 'toolcell-settings-'));
  await mkdir(join(workspace, '.toolcell'));
  await writeFile(join(workspace, '.toolcell', 'settings.json'), JSON.stringify(settings));
  return workspace;
}

function responseOf(parts: Awaited<ReturnType<typeof execJson>>['parts'], index = 0): string {
  return JSON.stringify(parts[index]!.functionResponse!.response);
}

test("settings' shell.inactivityTimeoutMs ends a silent command", async (t) => {
  // Long enough for a loaded machine to start bash and print, since the partial output is asserted too.
  const workspace = await workspaceWithSettings({ shell: { inactivityTimeoutMs: 3000 } });
  const { parts } = await execJson(
    workspace,
    [{ name: 'run_shell_command', args: { command: 'echo started; sleep 60' } }],
    ['--sandbox', 'none', '--approval', 'yolo'],
  );
  t.regex(responseOf(parts), /no output for 3 s/);
  t.regex(responseOf(parts), /started/);
});

test("settings' shell.savedOutputMaxBytes caps a command's saved output; a value under 1 KiB is refused, naming the field", async (t) => {
  const workspace = await workspaceWithSettings({ shell: { savedOutputMaxBytes: 2048 } });
  const { parts } = await execJson(
    workspace,
    [{ name: 'run_shell_command', args: { command: 'seq 1 100000' }, id: 'capped' }],
    ['--sandbox', 'none', '--approval', 'yolo'],
  );
  t.regex(responseOf(parts), /the whole output was 588895 bytes in 100000 lines\. Its first \d+ lines \(\d+ bytes\) are saved at \S+capped\.txt/);
  const file = await readFile(join(workspace, '.toolcell', 'tool-outputs', 'capped.txt'), 'utf8');
  t.true(Buffer.byteLength(file) < 2048 + 300);
  t.regex(file, /\n\[\.\.\. saved output cut here, after line \d+, at its size cap of 2048 bytes \(shell\.savedOutputMaxBytes\)/);
  const refused = await runCli(['exec', '--workspace', await workspaceWithSettings({ shell: { savedOutputMaxBytes: 10 } }), '--json'], { input: '[]' });
  t.is(refused.code, 2);
  t.regex(refused.stderr, /savedOutputMaxBytes/);
});

test("--timeout also bounds a discovered tool's call command", async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'toolcell-settings-'));
  const commands = await writeDiscoveryScripts(workspace);
  await mkdir(join(workspace, '.toolcell'));
  await writeFile(join(workspace, '.toolcell', 'settings.json'), JSON.stringify({ tools: { ...commands, callTimeoutMs: 600_000 } }));
  const { parts } = await execJson(workspace, [{ name: 'discovered_tool_hang', args: {} }], ['--sandbox', 'none', '--approval', 'yolo', '--timeout', '1']);
  t.regex(responseOf(parts), /timed out after 1000 ms/);
});

test('settings asking for sandbox.mode "none" are refused with a warning; the flag can still choose it', async (t) => {
  const workspace = await workspaceWithSettings({ sandbox: { mode: 'none' } });
  const listed = await runCli(['tools', '--workspace', workspace]);
  t.is(listed.code, 0);
  t.regex(listed.stderr, /sandbox\.mode "none", which only the --sandbox none flag can choose/);
  const named = await runCli(['tools', '--workspace', workspace, '--sandbox', 'none']);
  t.notRegex(named.stderr, /sandbox\.mode/);
});

test('an invalid sandbox.mode in settings is a usage error naming the field', async (t) => {
  const workspace = await workspaceWithSettings({ sandbox: { mode: 'host' } });
  const result = await runCli(['exec', '--workspace', workspace, '--json'], { input: '[]' });
  t.is(result.code, 2);
  t.regex(result.stderr, /sandbox\.mode/);
});

docker("settings' sandbox.mode docker runs commands in the container without a flag", async (t) => {
  const workspace = await workspaceWithSettings({ sandbox: { mode: 'docker' } });
  const { parts } = await execJson(workspace, [{ name: 'run_shell_command', args: { command: 'echo "pwd=$PWD"' } }], ['--approval', 'yolo']);
  t.regex(responseOf(parts), /pwd=\/workspace/);
});

test('with an OpenTelemetry SDK registered through node --import, toolcell exec exports a span per call', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'toolcell-otel-'));
  await writeFile(join(workspace, 'a.txt'), 'hello\n');
  const spansFile = join(workspace, 'spans.jsonl');
  const register = new URL('../fixtures/otel/register-file-exporter.js', import.meta.url).href;
  const result = await runCli(['exec', '--workspace', workspace, '--json'], {
    input: JSON.stringify([
      { name: 'read_file', args: { file_path: 'a.txt' } },
      { name: 'no_such_tool', args: {} },
    ]),
    env: { NODE_OPTIONS: `--import ${register}`, TOOLCELL_TEST_SPANS_FILE: spansFile },
  });
  t.is(result.code, 0, result.stderr);
  const spans = (await readFile(spansFile, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { name: string; attributes: Record<string, unknown> });
  t.deepEqual(spans.map((span) => span.name).sort(), ['tool_call no_such_tool', 'tool_call read_file']);
  t.like(spans.find((span) => span.name === 'tool_call read_file')!.attributes, { 'toolcell.tool.success': true });
});
