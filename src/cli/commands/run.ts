import { randomUUID } from 'node:crypto';
import { Option, type Command } from 'commander';
import type { AgentOutcome } from '../../agent/events.js';
import { WarningCode } from '../../errors.js';
import { type AgentCliOptions, maxTurnsOption, modelOption, telemetryFileOption } from '../../ui/agent-cli-options.js';
import type { AgentSetup } from '../agent-setup.js';
import { describeRequest } from '../../ui/describe-call.js';
import { JsonResultCollector } from '../../ui/headless/json-result.js';
import { StreamJsonWriter } from '../../ui/headless/stream-json.js';
import { TextReporter } from '../../ui/headless/text-reporter.js';
import { colorEnabled, createStyle } from '../../ui/style.js';
import { EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, exitCodeForSetUpFailure, exitCodeForSignal } from '../exit-codes.js';
import { type RunnerCliOptions, addRuntimeOptions } from '../options.js';
import { readInput } from '../read-input.js';

/** `toolcell run` stopped because the model was still calling tools at --max-turns (as gemini-cli's 53). */
export const EXIT_TURN_LIMIT = 53;

type OutputFormat = 'text' | 'json' | 'stream-json';

interface RunOptions extends RunnerCliOptions, AgentCliOptions {
  output: OutputFormat;
}

const MAX_PROMPT_BYTES = 1024 * 1024;

/** Registers `toolcell run "PROMPT"`: one prompt, non-interactively, with the model running tools. */
export function registerRunCommand(program: Command): void {
  addRuntimeOptions(
    program
      .command('run')
      .description('Send one prompt to Gemini and run the tool calls it makes in the workspace, non-interactively.')
      .argument('[prompt]', 'the prompt; omit it or give - to read it from stdin')
      .addOption(modelOption())
      .addOption(
        new Option('-o, --output <format>', 'text | json | stream-json (one JSON event per line)').choices(['text', 'json', 'stream-json']).default('text'),
      )
      .addOption(maxTurnsOption()),
  )
    .addOption(telemetryFileOption())
    .addHelpText('after', RUN_HELP)
    .action(async (prompt: string | undefined, options: RunOptions) => {
      process.exitCode = await runPrompt(prompt, options);
    });
}

const RUN_HELP = `
Nobody is asked to confirm anything: with --approval default, calls that need
confirmation (edits, shell commands, MCP tools) are denied and the model
is told so (error type confirmation_required). autoEdit lets file edits run,
yolo lets everything run, plan only runs read-only tools.

Needs GEMINI_API_KEY (or GOOGLE_API_KEY). GOOGLE_GEMINI_BASE_URL moves the API
endpoint (a proxy or gateway).

Output:
  text         the model's answer on stdout; tool calls and errors on stderr
  json         one JSON object at the end: {session_id, model, status, response,
               tool_calls, stats, warnings, error?}
  stream-json  one JSON object per line, Gemini CLI's events and fields: init,
               message, tool_use, tool_result, error, result; plus toolcell's
               tool_output (what a running call printed since its last one)

Exit codes:
  0    the model finished its answer
  1    the Gemini API or the runtime failed (a one-line reason; code in [brackets])
  2    usage or configuration error: bad option, no prompt, no API key, bad workspace
  53   stopped at --max-turns while the model was still calling tools
  130  interrupted (Ctrl+C): the stream was stopped and running calls cancelled
       (a sandbox container still starting is cancelled and removed)
  143  stopped by SIGTERM, the same way

Examples:
  toolcell run "summarise README.md"
  toolcell run --approval autoEdit -o stream-json "fix the typo in notes.txt" | jq .`;

async function runPrompt(promptArg: string | undefined, options: RunOptions): Promise<number> {
  const fail = (message: string, code: number) => {
    process.stderr.write(`toolcell run: ${message}\n`);
    return code;
  };
  let prompt: string;
  try {
    prompt = await readPrompt(promptArg);
  } catch (error) {
    return fail((error as Error).message, EXIT_USAGE);
  }

  const controller = new AbortController();
  let interrupts = 0;
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    stoppedBy ??= signal;
    if (++interrupts > 1) process.exit(exitCodeForSignal(signal));
    if (options.output === 'text') process.stderr.write('toolcell run: interrupted, stopping (Ctrl+C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed pipe (`| head`) ends the run instead of crashing it.
  const onStdoutError = () => controller.abort();
  process.stdout.on('error', onStdoutError);
  const sessionId = randomUUID();
  const out = (text: string) => void process.stdout.write(text);
  const streamJson = options.output === 'stream-json' ? new StreamJsonWriter(out) : undefined;

  const setupWarnings: string[] = [];
  let setup: AgentSetup | undefined;
  try {
    try {
      // Loaded on use: @google/genai is heavy, and other commands do not need it.
      const { setUpAgent } = await import('../agent-setup.js');
      setup = await setUpAgent({
        ...options,
        interactive: false,
        scheduler: streamJson ? { onOutput: (callId, output) => streamJson.toolOutput(callId, output) } : {},
        // stream-json consumers expect `init` first: hold setup warnings until it is out.
        onWarning: (message) => (streamJson ? setupWarnings.push(message) : process.stderr.write(`toolcell run: ${message}\n`)),
      });
    } catch (error) {
      return fail((error as Error).message, exitCodeForSetUpFailure(error));
    }
    const { agent, runtime } = setup;
    const style = createStyle(colorEnabled(process.stderr));
    const text =
      options.output === 'text'
        ? new TextReporter({
            out,
            err: (t) => void process.stderr.write(t),
            style,
            prefix: 'toolcell run',
            describe: (r) => describeRequest(runtime.registry, r),
          })
        : undefined;
    const json = options.output === 'json' ? new JsonResultCollector() : undefined;

    streamJson?.emit({ type: 'init', session_id: sessionId, model: options.model, workspace: runtime.workspace.roots[0]!, approval_mode: options.approval });
    for (const message of setupWarnings) streamJson?.emit({ type: 'error', severity: 'warning', code: WarningCode.RUNTIME_WARNING, message });
    streamJson?.emit({ type: 'message', role: 'user', content: prompt });
    let outcome: AgentOutcome | undefined;
    for await (const event of agent.send(prompt, { signal: controller.signal })) {
      streamJson?.agentEvent(event);
      text?.agentEvent(event);
      json?.agentEvent(event);
      if (event.type === 'finished') outcome = event.outcome;
    }
    if (!outcome) return fail('the agent ended without an outcome', EXIT_FAILURE);
    streamJson?.result(outcome, { model: options.model });
    text?.finish(outcome);
    if (json) out(`${JSON.stringify(json.result(outcome, { sessionId, model: options.model }), null, 2)}\n`);
    return outcome.status === 'cancelled' && stoppedBy ? exitCodeForSignal(stoppedBy) : exitCodeOf(outcome);
  } finally {
    await setup?.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.stdout.off('error', onStdoutError);
  }
}

function exitCodeOf(outcome: AgentOutcome): number {
  switch (outcome.status) {
    case 'completed':
      return EXIT_OK;
    case 'max_turns':
      return EXIT_TURN_LIMIT;
    case 'cancelled':
      return EXIT_INTERRUPTED;
    default:
      return EXIT_FAILURE;
  }
}

async function readPrompt(arg: string | undefined): Promise<string> {
  let prompt = arg;
  if (prompt === undefined || prompt === '-') {
    if (process.stdin.isTTY) throw new Error('no prompt: give one as an argument, or pipe it to stdin');
    prompt = await readInput('-', { maxBytes: MAX_PROMPT_BYTES });
  }
  if (prompt.trim() === '') throw new Error('the prompt is empty');
  return prompt;
}
