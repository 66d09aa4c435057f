import test from 'ava';
import { discoverCommandTools } from '../../src/discovery/discover-command-tools.js';
import { isToolcellError } from '../../src/errors.js';
import { ShellService } from '../../src/shell/shell-service.js';
import { GEMINI_FUNCTION_NAME } from '../../src/tools/names.js';
import { discoverInSession } from './discovery-scripts.js';

/**
 * Discovery through the real shell service. The session runs on the host
 * (`sandbox: 'none'`) so that these tests pin down discovery itself on any
 * machine; the sandboxed path is covered where Docker is required.
 */
let service: ShellService;
test.before(async () => {
  service = await ShellService.create();
});
test.after.always(async () => {
  await service?.close();
});

function setup(t: { teardown: (fn: () => Promise<void>) => void }, options: { callTimeoutMs?: number; trusted?: boolean } = {}) {
  return discoverInSession(t, { service, sandbox: 'none', ...options });
}

const noAbort = () => new AbortController().signal;

test('declarations become discovered_tool_<name> tools with Gemini-clean schemas', async (t) => {
  const { tools, tool } = await setup(t);
  t.deepEqual(
    tools.map((candidate) => candidate.name),
    [
      'discovered_tool_greet',
      'discovered_tool_fail',
      'discovered_tool_killself',
      'discovered_tool_hang',
      'discovered_tool_ignore_stdin',
      'discovered_tool_my_tool_with_spaces',
    ],
  );
  for (const candidate of tools) t.regex(candidate.name, GEMINI_FUNCTION_NAME);
  t.deepEqual(tool('discovered_tool_greet').parametersJsonSchema, { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] });
  t.deepEqual(tool('discovered_tool_greet').source, { type: 'discovered', command: 'sh ./call.sh' });
  t.false(tool('discovered_tool_greet').validateParams({}).ok);
});

test('a call gets the tool name as argument and the params as JSON on stdin', async (t) => {
  const { tool } = await setup(t);
  const result = await tool('discovered_tool_greet').execute({ who: 'bob' }, noAbort());
  t.is(result.error, undefined);
  t.is(result.llmContent, 'hello {"who":"bob"}');
  const odd = await tool('discovered_tool_my_tool_with_spaces').execute({}, noAbort());
  t.is(odd.llmContent, 'called [my tool/with spaces] with {}');
});

test('a non-zero exit is an error result with stdout, stderr and the exit code', async (t) => {
  const { tool } = await setup(t);
  const result = await tool('discovered_tool_fail').execute({}, noAbort());
  t.is(result.error?.type, 'discovered_tool_execution_error');
  t.regex(result.error?.message ?? '', /exited with code 7/);
  const text = String(result.llmContent);
  t.regex(text, /Stdout: partial output/);
  t.regex(text, /Stderr: something broke/);
  t.regex(text, /Exit Code: 7/);
  t.regex(text, /Signal: \(none\)/);
});

test('a signal is an error result naming it', async (t) => {
  const { tool } = await setup(t);
  const result = await tool('discovered_tool_killself').execute({}, noAbort());
  t.is(result.error?.type, 'discovered_tool_execution_error');
  t.regex(String(result.llmContent), /Signal: SIGKILL/);
});

test('a hanging call is ended at its timeout', async (t) => {
  const { tool } = await setup(t, { callTimeoutMs: 500 });
  const result = await tool('discovered_tool_hang').execute({}, noAbort());
  t.is(result.error?.type, 'execution_timeout');
  t.regex(result.error?.message ?? '', /timed out after 500 ms/);
});

test('aborting a call ends it as cancelled', async (t) => {
  const { tool } = await setup(t);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const result = await tool('discovered_tool_hang').execute({}, controller.signal);
  t.is(result.error?.type, 'cancelled');
});

test('a call command that ignores a large stdin still works', async (t) => {
  const { tool } = await setup(t);
  const result = await tool('discovered_tool_ignore_stdin').execute({ blob: 'x'.repeat(2_000_000) }, noAbort());
  t.is(result.error, undefined);
  t.is(String(result.llmContent).trim(), 'ignored');
});

test('confirmation is of type exec naming the command and the sandbox, unless trusted', async (t) => {
  const { tool } = await setup(t);
  const details = await tool('discovered_tool_greet').shouldConfirmExecute({ who: 'x' }, noAbort());
  t.like(details, { type: 'exec', command: 'sh ./call.sh greet', rootCommand: 'discovered_tool_greet', sandbox: 'host (no sandbox)' });
  const trusted = await setup(t, { trusted: true });
  t.false(await trusted.tool('discovered_tool_greet').shouldConfirmExecute({ who: 'x' }, noAbort()));
});

async function discoveryError(t: { teardown: (fn: () => Promise<void>) => void }, discoveryCommand: string, discoveryTimeoutMs?: number): Promise<string> {
  const { runner } = await setup(t);
  try {
    await discoverCommandTools({ discoveryCommand, callCommand: 'true', runner, ...(discoveryTimeoutMs ? { discoveryTimeoutMs } : {}) });
  } catch (error) {
    if (isToolcellError(error) && error.code === 'tool_discovery_failed') return error.message;
    throw error;
  }
  throw new Error('discovery did not fail');
}

test('a discovery command printing bad JSON is a clear error naming it', async (t) => {
  t.regex(await discoveryError(t, 'echo "not json"'), /^Tool discovery command "echo "not json"" printed invalid output: output is not valid JSON/);
});

test('a discovery command that exits non-zero is an error with its stderr', async (t) => {
  t.regex(await discoveryError(t, 'echo oops >&2; exit 5'), /exited with code 5; stderr: oops/);
});

test('an invalid declaration is an error saying which and why', async (t) => {
  t.regex(await discoveryError(t, `echo '[{"name": "ok"}, {"name": ""}]'`), /declaration 1: "name" must be a non-empty string/);
});

test('huge discovery output is refused', async (t) => {
  t.regex(await discoveryError(t, 'head -c 12000000 /dev/zero | tr "\\0" " "'), /printed too much output/);
});

test('a hanging discovery command times out', async (t) => {
  t.regex(await discoveryError(t, 'sleep 1000', 500), /timed out after 500 ms/);
});

test('bad discoverCommandTools options are refused naming the field, before anything runs', async (t) => {
  const { runner } = await setup(t);
  await t.throwsAsync(discoverCommandTools({ discoveryCommand: '  ', callCommand: 'true', runner }), {
    instanceOf: TypeError,
    message: 'discoverCommandTools: options.discoveryCommand must be a non-empty string',
  });
  await t.throwsAsync(discoverCommandTools({ discoveryCommand: 'true', callCommand: 'true', runner, callTimeoutMs: 0 }), {
    instanceOf: RangeError,
    message: 'discoverCommandTools: options.callTimeoutMs must be at least 1',
  });
  await t.throwsAsync(discoverCommandTools({ discoveryCommand: 'true', callCommand: 'true', runner: {} as never }), {
    instanceOf: TypeError,
    message: 'discoverCommandTools: options.runner must have run() and describe()',
  });
});
