import { z } from 'zod';
import { objectWithMethods, parseOptions } from '../contracts/parse-options.js';
import { ToolcellError, ToolErrorType } from '../errors.js';
import type { CommandRunner } from './command-runner.js';
import { DiscoveredTool } from './discovered-tool.js';
import { parseFunctionDeclarations } from './function-declarations.js';
import { uniqueToolName } from './unique-tool-name.js';

/** Output cap of the discovery command (a runaway command must not fill memory): more is an error, not a truncated parse. */
export const DISCOVERY_OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024;
export const DEFAULT_DISCOVERY_TIMEOUT_MS = 60_000;
/** Registered names of discovered tools start with this. */
export const DISCOVERED_TOOL_PREFIX = 'discovered_tool_';

const commandLine = z.string().refine((command) => command.trim() !== '', { error: 'must be a non-empty string' });

const discoverCommandToolsOptionsSchema = z.strictObject({
  discoveryCommand: commandLine,
  callCommand: commandLine,
  runner: objectWithMethods<CommandRunner>('run', 'describe'),
  /** Skip confirmation for the discovered tools. */
  trusted: z.boolean().default(false),
  discoveryTimeoutMs: z.number().int().min(1).default(DEFAULT_DISCOVERY_TIMEOUT_MS),
  callTimeoutMs: z.number().int().min(1).optional(),
  /** Names already in use (the registry's): new names avoid them, and are added. */
  takenNames: z.instanceof(Set<string>, { error: 'must be a Set of names' }).optional(),
  signal: z.instanceof(AbortSignal, { error: 'must be an AbortSignal' }).optional(),
});

export type DiscoverCommandToolsOptions = z.input<typeof discoverCommandToolsOptionsSchema>;

/**
 * Runs the discovery command (`tools.discoveryCommand`) and makes one DiscoveredTool
 * per declaration it prints, named `discovered_tool_<name>`. Throws a
 * ToolcellError `tool_discovery_failed` that names the command and the
 * problem: it could not start, exited non-zero, was killed or timed out,
 * printed more than 10 MB, or printed something that is not a valid list of
 * declarations.
 */
export async function discoverCommandTools(raw: DiscoverCommandToolsOptions): Promise<DiscoveredTool[]> {
  const options = parseOptions(discoverCommandToolsOptionsSchema, raw, 'discoverCommandTools');
  const command = options.discoveryCommand;
  const timeoutMs = options.discoveryTimeoutMs;
  const fail = (problem: string, cause?: unknown): ToolcellError =>
    new ToolcellError(ToolErrorType.TOOL_DISCOVERY_FAILED, `Tool discovery command "${command}" ${problem}`, cause === undefined ? undefined : { cause });

  let result;
  try {
    result = await options.runner.run({
      command,
      stdin: '',
      timeoutMs,
      maxOutputBytes: DISCOVERY_OUTPUT_LIMIT_BYTES,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    throw fail(`could not be started: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const stderr = result.stderr.trim() ? `; stderr: ${tail(result.stderr.trim(), 500)}` : '';
  if (result.aborted) throw fail('was cancelled');
  if (result.timedOut) throw fail(`timed out after ${timeoutMs} ms${stderr}`);
  if (result.truncated || Buffer.byteLength(result.stdout) > DISCOVERY_OUTPUT_LIMIT_BYTES) {
    throw fail(`printed too much output: it passed the output limit (at most ${DISCOVERY_OUTPUT_LIMIT_BYTES} bytes are accepted) and was cut`);
  }
  if (result.signal) throw fail(`was killed by ${result.signal}${stderr}`);
  if (result.exitCode !== 0) throw fail(`exited with code ${result.exitCode ?? 'unknown'}${stderr}`);

  let declarations;
  try {
    declarations = parseFunctionDeclarations(result.stdout);
  } catch (error) {
    throw fail(`printed invalid output: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const taken = options.takenNames ?? new Set<string>();
  return declarations.map(
    (declaration) =>
      new DiscoveredTool({
        name: uniqueToolName(`${DISCOVERED_TOOL_PREFIX}${declaration.name}`, taken),
        declaration,
        callCommand: options.callCommand,
        runner: options.runner,
        trusted: options.trusted,
        ...(options.callTimeoutMs !== undefined ? { timeoutMs: options.callTimeoutMs } : {}),
      }),
  );
}

function tail(text: string, max: number): string {
  return text.length > max ? `…${text.slice(-max)}` : text;
}
