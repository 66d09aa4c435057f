import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { ToolRegistry } from '../../../src/registry/tool-registry.js';
import { ShellService, type ShellServiceOptions } from '../../../src/shell/shell-service.js';
import type { SandboxMode } from '../../../src/shell/run-types.js';
import { registerShellTool } from '../../../src/tools/shell/register-shell-tool.js';
import { rootCommands } from '../../../src/tools/shell/root-commands.js';
import { ShellTool, type ShellToolOptions } from '../../../src/tools/shell/shell-tool.js';
import { MAX_COMMAND_BYTES } from '../../../src/contracts/defaults.js';
import type { LiveOutput, ToolResult } from '../../../src/tools/tool.js';
import { llmText, useTempWorkspace, type TempWorkspace } from '../../helpers/workspace.js';

async function useShellTool(
  t: ExecutionContext,
  options: { service?: ShellServiceOptions; sandbox?: SandboxMode; tool?: Partial<ShellToolOptions> } = {},
): Promise<{ tool: ShellTool; workspace: TempWorkspace }> {
  const workspace = useTempWorkspace(t);
  const service = await ShellService.create(options.service);
  t.teardown(() => service.close());
  const session = await service.openSession({ sandbox: options.sandbox ?? 'none', workspaceRoot: workspace.root });
  return { tool: new ShellTool({ session, workspace: workspace.info, ...options.tool }), workspace };
}

async function run(tool: ShellTool, raw: unknown, signal = new AbortController().signal, onOutput?: (output: LiveOutput) => void): Promise<ToolResult> {
  const validated = tool.validateParams(raw);
  if (!validated.ok) throw new Error(validated.error);
  return tool.execute(validated.params, signal, onOutput);
}

test('declaration: Gemini name and parameters, kind execute, live output', async (t) => {
  const { tool } = await useShellTool(t);
  const declaration = tool.declaration();
  t.is(declaration.name, 'run_shell_command');
  const schema = declaration.parametersJsonSchema as { properties: Record<string, unknown>; required: string[] };
  t.deepEqual(Object.keys(schema.properties).sort(), ['command', 'description', 'dir_path', 'is_background']);
  t.deepEqual(schema.required, ['command']);
  t.is(tool.kind, 'execute');
  t.true(tool.canUpdateOutput);
});

test('params: an empty command or an unknown key is rejected', async (t) => {
  const { tool } = await useShellTool(t);
  const empty = tool.validateParams({ command: '   ' });
  t.false(empty.ok);
  t.false(tool.validateParams({ command: 'ls', cwd: '/' }).ok);
  t.false(tool.validateParams('ls').ok);
});

test('params: a command over 131,071 UTF-8 bytes is refused with command_too_long; one at the limit runs', async (t) => {
  const { tool } = await useShellTool(t);
  const over = tool.validateParams({ command: `echo ${'é'.repeat(MAX_COMMAND_BYTES / 2)}` });
  t.false(over.ok);
  if (!over.ok) {
    t.is(over.type, 'command_too_long');
    t.regex(over.error, /longer than 131071 bytes/);
  }
  t.is((tool.validateParams({ command: `echo ${'a'.repeat(MAX_COMMAND_BYTES * 30)}` }) as { type?: string }).type, 'command_too_long');
  // The longest command bash can be started with still runs: the cap refuses nothing that could run.
  const atLimit = `: ${'a'.repeat(MAX_COMMAND_BYTES - 2)}`;
  const result = await run(tool, { command: `${atLimit.slice(0, -9)}; echo ok` });
  t.regex(String(result.llmContent), /ok/);
});

test('confirmation: a command over 4,096 characters is named by its hash, not split on the main thread', async (t) => {
  const { tool } = await useShellTool(t);
  const long = `ls; ${': '.repeat(3000)}; rm -rf build`;
  const details = await tool.shouldConfirmExecute({ command: long });
  t.regex(details.rootCommand, /^a command of \d+ characters \(sha256 [0-9a-f]{16}\)$/);
  t.not((await tool.shouldConfirmExecute({ command: `${long} ` })).rootCommand, details.rootCommand, '"always allow" covers only the same command');
});

test('confirmation: exec details with the root commands, directory and where it runs', async (t) => {
  const { tool } = await useShellTool(t);
  const details = await tool.shouldConfirmExecute({ command: 'FOO=1 git status && npm test | tee log', dir_path: 'sub' });
  t.deepEqual(details, {
    type: 'exec',
    title: 'Confirm Shell Command',
    command: 'FOO=1 git status && npm test | tee log',
    rootCommand: 'git, npm, tee',
    directory: 'sub',
    sandbox: 'host (no sandbox)',
  });
});

test('rootCommands finds the commands of a line, including substitutions and compound commands', (t) => {
  t.deepEqual(rootCommands('ls -la'), ['ls']);
  t.deepEqual(rootCommands('echo $(rm -rf x) > out; if make; then git push; fi'), ['echo', 'rm', 'make', 'git']);
  t.deepEqual(rootCommands('for f in *; do wc -l $f; done'), ['wc']);
});

test('result: Gemini CLI shape for the model, the rendered output for people', async (t) => {
  const { tool, workspace } = await useShellTool(t);
  workspace.mkdir('sub');
  const result = await run(tool, { command: 'printf "50%%\\r100%%\\n"; pwd; exit 3', dir_path: 'sub' });
  t.is(result.error, undefined, 'a non-zero exit is not a tool error');
  const lines = llmText(result).split('\n');
  t.is(lines[0], 'Command: printf "50%%\\r100%%\\n"; pwd; exit 3');
  t.is(lines[1], 'Directory: sub');
  t.is(lines[2], 'Output: 100%');
  t.is(lines[3], workspace.path('sub'));
  t.is(lines[4], 'Error: (none)');
  t.is(lines[5], 'Exit Code: 3');
  t.is(lines[6], 'Signal: (none)');
  t.is(lines[7], 'Background PIDs: (none)');
  t.regex(lines[8] ?? '', /^Process Group PGID: \d+$/);
  t.is(result.returnDisplay, `100%\n${workspace.path('sub')}`);
});

test('dir_path outside the workspace, missing or a file: an error result, nothing runs', async (t) => {
  const { tool, workspace } = await useShellTool(t);
  workspace.write('file.txt', 'x');
  workspace.symlink('link-out', workspace.outside);
  const cases: Array<[string, string]> = [
    ['..', 'path_not_in_workspace'],
    [workspace.outside, 'path_not_in_workspace'],
    ['link-out', 'path_not_in_workspace'],
    ['missing', 'file_not_found'],
    ['file.txt', 'path_is_not_a_directory'],
  ];
  for (const [dir, type] of cases) {
    const result = await run(tool, { command: 'touch ran', dir_path: dir });
    t.is(result.error?.type as string | undefined, type, dir);
  }
  t.false(workspace.exists('ran'));
});

test('live output reaches updateOutput while the command runs', async (t) => {
  const { tool } = await useShellTool(t, { service: { liveUpdateIntervalMs: 0 } });
  const updates: LiveOutput[] = [];
  await run(tool, { command: 'echo one; sleep 0.2; echo two' }, undefined, (output) => updates.push(output));
  t.true(updates.some((update) => typeof update === 'string' && update.includes('one')));
});

test('cancel: the result says cancelled and keeps the partial output', async (t) => {
  const { tool } = await useShellTool(t, { service: { liveUpdateIntervalMs: 0 } });
  const controller = new AbortController();
  const result = await run(tool, { command: 'echo partial-output; sleep 60' }, controller.signal, (output) => {
    if (String(output).includes('partial-output')) controller.abort();
  });
  const text = llmText(result);
  t.regex(text, /^Command was cancelled by the user before it could complete\./);
  t.regex(text, /Output: partial-output/);
  t.regex(text, /Signal: SIGTERM/);
});

test('a wall-clock limit from the tool options ends the command and says so', async (t) => {
  // The limit leaves a loaded machine time to start bash and print, since the partial output is asserted too.
  const { tool } = await useShellTool(t, { tool: { wallTimeoutMs: 3000 } });
  const result = await run(tool, { command: 'echo started; sleep 60' });
  t.regex(llmText(result), /^Command was cancelled because it ran longer than the time limit of 3 s\./);
  t.regex(llmText(result), /Output: started/);
  t.is(result.error?.type, 'execution_timeout');
});

test('is_background returns the PID and a log file at once; the process keeps running', async (t) => {
  const { tool } = await useShellTool(t);
  const result = await run(tool, { command: 'echo from-background; sleep 30', is_background: true });
  const text = llmText(result);
  const pid = Number(/Background PIDs: (\d+)/.exec(text)?.[1]);
  const log = /Its output goes to (\S+)\./.exec(text)?.[1];
  t.true(pid > 0);
  t.truthy(log);
  t.notThrows(() => process.kill(pid, 0), 'still running');
  for (let i = 0; i < 1500 && !readFileSync(log!, 'utf8').includes('from-background'); i++) await new Promise((r) => setTimeout(r, 20));
  t.regex(readFileSync(log!, 'utf8'), /from-background/);
});

test('with auto and no reachable Docker, the tool fails with sandbox_unavailable and runs nothing', async (t) => {
  const { tool, workspace } = await useShellTool(t, { sandbox: 'auto', service: { docker: { socketPath: '/nonexistent/dead.sock' } } });
  const details = await tool.shouldConfirmExecute({ command: 'ls' });
  t.regex(details.sandbox, /^unavailable/);
  const result = await run(tool, { command: 'touch ran' });
  t.is(result.error?.type, 'sandbox_unavailable');
  t.regex(result.error?.message ?? '', /toolcell sandbox setup/);
  t.notRegex(result.error?.message ?? '', /\n/, 'the refusal is one line');
  t.false(workspace.exists('ran'));
});

test('registerShellTool registers run_shell_command in a registry', async (t) => {
  const workspace = useTempWorkspace(t);
  const service = await ShellService.create();
  t.teardown(() => service.close());
  const session = await service.openSession({ sandbox: 'none', workspaceRoot: workspace.root });
  const registry = new ToolRegistry();
  const tool = registerShellTool(registry, { session, workspace: workspace.info });
  t.is(registry.get('run_shell_command'), tool);
  t.throws(() => registerShellTool(registry, { session, workspace: workspace.info, wallTimeoutMs: -5 }), { instanceOf: RangeError, message: /wallTimeoutMs/ });
});
