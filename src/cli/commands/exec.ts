import type { Command } from 'commander';
import type { Part } from '@google/genai';
import { isToolcellError } from '../../errors.js';
import { EXIT_OK, EXIT_USAGE, exitCodeForSignal } from '../exit-codes.js';
import { formatCompletedCalls } from '../format-calls.js';
import { colorEnabled } from '../../ui/style.js';
import { type RunnerCliOptions, runtimeOptionsFrom, addRuntimeOptions } from '../options.js';
import { MAX_INPUT_BYTES, parseFunctionCalls } from '../read-calls.js';
import { readInput } from '../read-input.js';
import type { Runtime } from '../../runtime/runtime.js';

interface ExecOptions extends RunnerCliOptions {
  json?: boolean;
  telemetryFile?: string;
}

/** Registers `toolcell exec`: runs a batch of FunctionCalls non-interactively. */
export function registerExecCommand(program: Command): void {
  addRuntimeOptions(
    program
      .command('exec')
      .description('Run a JSON array of function calls ({name, args, id?}) through the scheduler, non-interactively, and print the functionResponse parts.')
      .argument('[file]', 'JSON file with the calls, or - for stdin (the default)'),
  )
    .option('--json', 'print the functionResponse parts as one JSON array, in call order')
    .option('--telemetry-file <file>', 'append one JSON line per finished call to this file')
    .addHelpText(
      'after',
      `
Calls that would need confirmation are denied (error type confirmation_required)
unless the approval mode allows them (autoEdit for file edits, yolo for all) or
a policy rule does (--policy FILE, ~/.toolcell/policies/*.toml). A policy deny
rule refuses a call in every mode (error type policy_denied, naming the rule).
A failed call's response is {"error": message, "errorType": stable type}.

Exit codes:
  0    the batch was processed (a tool's failure is a response, not an exit code)
  2    usage error or malformed input (one line on stderr)
  130  interrupted by SIGINT; running calls were cancelled first
  143  stopped by SIGTERM, the same way

Example:
  echo '[{"name":"read_file","args":{"file_path":"README.md"}}]' | toolcell exec --json`,
    )
    .action(async (file: string | undefined, options: ExecOptions) => {
      process.exitCode = await runExec(file, options);
    });
}

async function runExec(file: string | undefined, options: ExecOptions): Promise<number> {
  let requests;
  try {
    requests = parseFunctionCalls(await readInput(file, { maxBytes: MAX_INPUT_BYTES }));
  } catch (error) {
    return usageError(error);
  }

  const controller = new AbortController();
  let interrupted: NodeJS.Signals | undefined;
  const onSigint = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(exitCodeForSignal(signal));
    interrupted = signal;
    process.stderr.write('toolcell: interrupted, cancelling running calls (press Ctrl+C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);

  let runtime: Runtime;
  try {
    // Loaded on use, so `--help` and `--version` start fast.
    const [{ createRuntime }, { JsonlFileSink }] = await Promise.all([import('../../runtime/runtime.js'), import('../../telemetry/jsonl-sink.js')]);
    runtime = await createRuntime({
      ...runtimeOptionsFrom(options),
      ...(options.telemetryFile ? { telemetry: new JsonlFileSink({ path: options.telemetryFile }) } : {}),
    });
  } catch (error) {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
    return usageError(error);
  }
  try {
    const completed = await runtime.createScheduler().schedule(requests, controller.signal);
    if (options.json) {
      const parts: Part[] = completed.flatMap((call) => call.response.responseParts);
      process.stdout.write(`${JSON.stringify(parts)}\n`);
    } else {
      process.stdout.write(formatCompletedCalls(completed, { color: colorEnabled(process.stdout) }));
    }
  } finally {
    await runtime.close();
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }
  return interrupted ? exitCodeForSignal(interrupted) : EXIT_OK;
}

function usageError(error: unknown): number {
  const message = isToolcellError(error) || error instanceof Error ? error.message : String(error);
  process.stderr.write(`toolcell exec: ${message}\n`);
  return EXIT_USAGE;
}
