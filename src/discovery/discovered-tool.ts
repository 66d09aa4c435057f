import { ToolErrorType } from '../errors.js';
import { toolErrorResult } from '../tools/results.js';
import type { ToolConfirmationDetails, ToolResult } from '../tools/tool.js';
import type { CommandRunner, CommandRunResult } from './command-runner.js';
import { shellQuote } from './command-runner.js';
import type { DiscoveredDeclaration } from './function-declarations.js';
import { JsonSchemaTool } from './json-schema-tool.js';

/** Default limit for one call command. */
export const DEFAULT_CALL_TIMEOUT_MS = 300_000;
/** Output per stream kept from a call command (the model sees at most the scheduler's cap of it). */
export const CALL_OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024;

export interface DiscoveredToolOptions {
  /** The registered name, `discovered_tool_<name>` made unique. */
  name: string;
  declaration: DiscoveredDeclaration;
  /** `tools.callCommand`; the tool's own name is appended as its argument. */
  callCommand: string;
  runner: CommandRunner;
  /** Skip confirmation (`tools.discoveryTrusted`). */
  trusted: boolean;
  timeoutMs?: number;
}

/**
 * A tool announced by the discovery command (`tools.discoveryCommand`, README "Settings"). A call runs
 * `<callCommand> <name>` through the runner (the sandbox, by default) with
 * the params as JSON on stdin: stdout is what the model gets; a non-zero
 * exit or a signal is a `discovered_tool_execution_error` carrying stdout,
 * stderr, the exit code and the signal.
 *
 * Confirmation is of type `exec` (it runs a command), with the registered
 * tool name as `rootCommand`, so "always allow" applies to this tool only.
 */
export class DiscoveredTool extends JsonSchemaTool {
  /** The name the discovery command used, passed to the call command. */
  readonly originalName: string;
  readonly #options: DiscoveredToolOptions;

  constructor(options: DiscoveredToolOptions) {
    super({
      name: options.name,
      displayName: options.declaration.name,
      description: options.declaration.description || `Discovered tool ${options.declaration.name}`,
      kind: 'execute',
      inputSchema: options.declaration.parametersJsonSchema,
      source: { type: 'discovered', command: options.callCommand },
    });
    this.#options = options;
    this.originalName = options.declaration.name;
  }

  /** The same tool running its calls through another runner (e.g. another sandbox session). */
  withRunner(runner: CommandRunner): DiscoveredTool {
    return new DiscoveredTool({ ...this.#options, runner });
  }

  /** The command line one call runs. */
  get commandLine(): string {
    return `${this.#options.callCommand} ${shellQuote(this.originalName)}`;
  }

  describe(params: Record<string, unknown>): string {
    return `${this.commandLine} <<< ${truncate(JSON.stringify(params), 200)}`;
  }

  override async shouldConfirmExecute(_params: Record<string, unknown>, _signal: AbortSignal): Promise<ToolConfirmationDetails | false> {
    if (this.#options.trusted) return false;
    return {
      type: 'exec',
      title: `Confirm discovered tool: ${this.name}`,
      command: this.commandLine,
      rootCommand: this.name,
      directory: '.',
      sandbox: this.#options.runner.describe(),
    };
  }

  async execute(params: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    let result: CommandRunResult;
    try {
      result = await this.#options.runner.run({
        command: this.commandLine,
        stdin: JSON.stringify(params),
        timeoutMs: this.#options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
        maxOutputBytes: CALL_OUTPUT_LIMIT_BYTES,
        signal,
      });
    } catch (error) {
      if (signal.aborted) return toolErrorResult(ToolErrorType.CANCELLED, `${this.name} was cancelled.`);
      return toolErrorResult(
        ToolErrorType.DISCOVERED_TOOL_EXECUTION_ERROR,
        `Could not run call command "${this.commandLine}": ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (result.aborted || signal.aborted) return toolErrorResult(ToolErrorType.CANCELLED, `${this.name} was cancelled.`);
    const failure = describeFailure(result, this.#options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    if (failure === undefined) {
      const note = result.truncated ? `\n[output truncated at ${CALL_OUTPUT_LIMIT_BYTES} bytes]` : '';
      return { llmContent: result.stdout + note, returnDisplay: result.stdout + note };
    }
    const report = [
      `Stdout: ${result.stdout || '(empty)'}`,
      `Stderr: ${result.stderr || '(empty)'}`,
      `Error: ${failure}`,
      `Exit Code: ${result.exitCode ?? '(none)'}`,
      `Signal: ${result.signal ?? '(none)'}`,
    ].join('\n');
    const type = result.timedOut ? ToolErrorType.EXECUTION_TIMEOUT : ToolErrorType.DISCOVERED_TOOL_EXECUTION_ERROR;
    return { llmContent: report, returnDisplay: report, error: { type, message: `${this.name}: ${failure}` } };
  }
}

function describeFailure(result: CommandRunResult, timeoutMs: number): string | undefined {
  if (result.timedOut) return `the call command timed out after ${timeoutMs} ms`;
  if (result.signal) return `the call command was killed by ${result.signal}`;
  if (result.exitCode !== 0) return `the call command exited with code ${result.exitCode ?? 'unknown'}`;
  return undefined;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
