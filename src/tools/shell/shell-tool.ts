import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { relative } from 'node:path';
import { z } from 'zod';
import { objectWithMethods, parseOptions } from '../../contracts/parse-options.js';
import { ToolErrorType, ToolcellError, errorMessage, isToolcellError } from '../../errors.js';
import { resolveWorkspacePath } from '../../fs/workspace-paths.js';
import type { CallSandbox } from '../../contracts/sandbox-runtime.js';
import type { ShellSessionHandle } from '../../shell/session-handle.js';
import { DEFAULT_INACTIVITY_TIMEOUT_MS } from '../../shell/run-types.js';
import { MAX_COMMAND_BYTES } from '../../contracts/defaults.js';
import type { WorkspaceInfo } from '../define-tool.js';
import { validateWithZod, zodToParametersJsonSchema } from '../parameters.js';
import { toolErrorResult } from '../results.js';
import { BaseTool } from '../base-tool.js';
import type { ExecConfirmationDetails, ToolExecuteContext, ToolResult, UpdateOutput, ValidationResult } from '../tool.js';
import { formatShellResult } from './format-result.js';
import { rootCommands } from './root-commands.js';

import { SHELL_TOOL_NAME } from '../../contracts/tool-names.js';

export { SHELL_TOOL_NAME };

const parameters = z
  .object({
    command: z
      .string()
      .refine((value) => value.trim().length > 0, 'Command cannot be empty.')
      .refine((value) => !value.includes('\0'), 'Command must not contain NUL characters.')
      .describe('Exact bash command to execute as `bash -c <command>`.'),
    description: z.string().optional().describe('Brief description of the command for the user. Be specific and concise; one sentence.'),
    dir_path: z
      .string()
      .optional()
      .describe('Directory to run the command in, relative to the workspace root (or absolute inside it). Default: the workspace root.'),
    is_background: z
      .boolean()
      .optional()
      .describe(
        'Run the command in the background (servers, watchers, anything that does not finish). Returns its PID and a log file at once; it runs until the session ends.',
      ),
  })
  .strict();

export type ShellToolParams = z.output<typeof parameters>;

/** Longer commands are not split on the main thread for the confirmation's summary (shell-quote takes ~0.2 s on 128 KiB). */
const LISTED_COMMAND_CHARS = 4_096;

/**
 * The commands a confirmation names ("always allow" remembers this label).
 * A long command is named by its hash instead: splitting it here would cost
 * the main thread in proportion to its length, and a label from its first
 * part alone would let "always allow ls" cover `ls; …; rm -rf /`.
 */
function rootCommandLabel(command: string): string {
  if (command.length > LISTED_COMMAND_CHARS)
    return `a command of ${command.length} characters (sha256 ${createHash('sha256').update(command).digest('hex').slice(0, 16)})`;
  const roots = rootCommands(command);
  return roots.length > 0 ? roots.join(', ') : 'shell command';
}

const DESCRIPTION = `Runs a shell command as \`bash -c <command>\` in the workspace's sandbox and returns what it printed.

- The command runs in a terminal with no input: anything that waits for input (prompts, \`read\`, passwords) reads end-of-file at once. Pass input through files, pipes or non-interactive flags (e.g. \`--yes\`).
- Output is shown as a terminal would show it (progress bars collapse, colours are removed). Very long output keeps its start and end; the result then gives the path of a file with all of it as plain text (one line per output line), to read with read_file and a line range. Binary output is described, not shown.
- Long-running processes (servers, watchers) need \`is_background: true\`: the call returns their PID and a log file at once, and they keep running until the session ends. Otherwise every process the command started ends with it.
- A command that prints nothing for a long time, or runs past the time limit, is stopped; the output so far is returned.

The result lists: Command, Directory, Output, Error, Exit Code, Signal, Background PIDs, Process Group PGID.`;

const shellToolOptionsSchema = z.object({
  /** The sandbox session commands run in (see ShellService.openSession), or anything with its `run` and `describe`. */
  session: objectWithMethods<Pick<ShellSessionHandle, 'run' | 'describe'>>('run', 'describe'),
  /** The workspace `dir_path` is confined to; its primary root is the session's workspace root. */
  workspace: z.custom<WorkspaceInfo>((value) => Array.isArray((value as Partial<WorkspaceInfo> | null)?.roots) && (value as WorkspaceInfo).roots.length > 0, {
    error: 'must have at least one root',
  }),
  /** Stop a command after this long without output. Default 300 000 ms; 0 disables it. */
  inactivityTimeoutMs: z.number().min(0).default(DEFAULT_INACTIVITY_TIMEOUT_MS),
  /** Stop a command after this long in total (CLI `--timeout`). Default: no limit. */
  wallTimeoutMs: z.number().positive().optional(),
});

export type ShellToolOptions = z.input<typeof shellToolOptionsSchema>;

/**
 * `run_shell_command`. Not a DefinedTool: it does not execute in the
 * Piscina pool but hands the command to the shell thread through its
 * session, which streams throttled live output back.
 */
export class ShellTool extends BaseTool<ShellToolParams> {
  readonly #session: Pick<ShellSessionHandle, 'run' | 'describe'>;
  readonly #workspace: WorkspaceInfo;
  readonly #inactivityMs: number;
  readonly #wallMs: number | undefined;

  constructor(options: ShellToolOptions) {
    super({
      name: SHELL_TOOL_NAME,
      displayName: 'Shell',
      description: DESCRIPTION,
      kind: 'execute',
      parametersJsonSchema: zodToParametersJsonSchema(parameters),
      canUpdateOutput: true,
      source: { type: 'builtin' },
    });
    const { session, workspace, inactivityTimeoutMs, wallTimeoutMs } = parseOptions(shellToolOptionsSchema, options, 'ShellTool');
    this.#session = session;
    this.#workspace = workspace;
    this.#inactivityMs = inactivityTimeoutMs;
    this.#wallMs = wallTimeoutMs;
  }

  validateParams(raw: unknown): ValidationResult<ShellToolParams> {
    const command = (raw as { command?: unknown } | null)?.command;
    // Checked before anything else reads the command (the policy's parse, the confirmation's split, the audit line).
    // A string longer in characters than the cap in bytes is over it without being measured.
    if (
      typeof command === 'string' &&
      command.length > MAX_COMMAND_BYTES / 3 &&
      (command.length > MAX_COMMAND_BYTES || Buffer.byteLength(command, 'utf8') > MAX_COMMAND_BYTES)
    ) {
      return {
        ok: false,
        type: ToolErrorType.COMMAND_TOO_LONG,
        error: `the command is longer than ${MAX_COMMAND_BYTES} bytes, the most a command can be (Linux's limit on one argument of \`bash -c\`); it was not run. Split it, or write a script to a file and run the file.`,
      };
    }
    return validateWithZod(parameters, raw);
  }

  describe(params: ShellToolParams): string {
    let text = params.command;
    if (params.dir_path) text += ` [in ${params.dir_path}]`;
    if (params.description) text += ` (${params.description.replace(/\n/g, ' ')})`;
    if (params.is_background) text += ' [background]';
    return text;
  }

  override async shouldConfirmExecute(params: ShellToolParams): Promise<ExecConfirmationDetails> {
    return {
      type: 'exec',
      title: 'Confirm Shell Command',
      command: params.command,
      rootCommand: rootCommandLabel(params.command),
      directory: params.dir_path || '.',
      sandbox: this.#session.describe(),
    };
  }

  async execute(params: ShellToolParams, signal: AbortSignal, updateOutput?: UpdateOutput, context?: ToolExecuteContext): Promise<ToolResult> {
    if (signal.aborted) {
      return { llmContent: 'Command was cancelled by the user before it could start.', returnDisplay: 'Command cancelled by user.' };
    }
    let cwd: string;
    try {
      cwd = await this.#resolveDirectory(params.dir_path);
    } catch (error) {
      return toolErrorResult(isToolcellError(error) ? error.code : ToolErrorType.PATH_NOT_IN_WORKSPACE, errorMessage(error));
    }
    const background = params.is_background === true;
    // The data plane streams a long output to the file the scheduler names, so the file holds all of it.
    const outputFile = background ? undefined : context?.outputFile;
    try {
      const result = await this.#session.run({
        command: params.command,
        cwd,
        mode: 'pty',
        background,
        timeouts: { inactivityMs: this.#inactivityMs, ...(this.#wallMs !== undefined ? { wallMs: this.#wallMs } : {}) },
        signal,
        ...(updateOutput && !background ? { onOutput: updateOutput } : {}),
        ...(outputFile ? { saveOutput: { path: outputFile.path, afterChars: outputFile.maxChars } } : {}),
      });
      const formatted = formatShellResult(
        {
          command: params.command,
          directory: params.dir_path ?? '',
          background,
          inactivityMs: this.#inactivityMs,
          ...(this.#wallMs !== undefined ? { wallMs: this.#wallMs } : {}),
        },
        result,
      );
      const sandbox = this.#sandbox();
      return sandbox ? { ...formatted, sandbox } : formatted;
    } catch (error) {
      if (isToolcellError(error) && error.code === ToolErrorType.CANCELLED) {
        return { llmContent: 'Command was cancelled by the user before it could start.', returnDisplay: 'Command cancelled by user.' };
      }
      const type = isToolcellError(error) ? error.code : ToolErrorType.SHELL_EXECUTE_ERROR;
      return toolErrorResult(type, errorMessage(error));
    }
  }

  /** Where the session's commands run, when the session says (ShellSessionHandle's backend and runtime). */
  #sandbox(): CallSandbox | undefined {
    const { backend, runtime } = this.#session as Partial<Pick<ShellSessionHandle, 'backend' | 'runtime'>>;
    if (backend !== 'docker' && backend !== 'host') return undefined;
    return { backend, ...(runtime !== undefined ? { runtime } : {}) };
  }

  /** `dir_path` as a path relative to the primary root (where the session's workspace is). */
  async #resolveDirectory(dirPath: string | undefined): Promise<string> {
    const primary = this.#workspace.roots[0]!;
    if (dirPath === undefined || dirPath === '' || dirPath === '.') return '';
    const resolved = await resolveWorkspacePath({ ...this.#workspace, roots: [primary] }, dirPath);
    if (!resolved.exists) throw new ToolcellError(ToolErrorType.FILE_NOT_FOUND, `Directory does not exist: ${dirPath}`);
    if (!(await stat(resolved.real)).isDirectory()) {
      throw new ToolcellError(ToolErrorType.PATH_IS_NOT_A_DIRECTORY, `Not a directory: ${dirPath}`);
    }
    return relative(primary, resolved.real);
  }
}

/** The `run_shell_command` tool over a sandbox session. */
export function createShellTool(options: ShellToolOptions): ShellTool {
  return new ShellTool(options);
}
