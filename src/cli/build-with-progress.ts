import type { BuildProgressEvent } from '../backends/docker/build-progress.js';
import { errorMessage, isToolcellError } from '../errors.js';
import { BuildProgressView } from '../ui/build-progress-view.js';
import { colorEnabled } from '../ui/style.js';
import { EXIT_FAILURE, exitCodeForSignal } from './exit-codes.js';

/**
 * Runs an image build with the progress `toolcell sandbox build` shows on
 * stderr (a live line on a terminal, plain lines otherwise); Ctrl+C or
 * SIGTERM cancels it. Returns its result, or undefined after saying why it
 * failed as `<prefix>: <message> [<code>]` and setting the exit code.
 */
export async function buildWithProgress<T>(
  prefix: string,
  build: (onProgress: (event: BuildProgressEvent) => void, signal: AbortSignal) => Promise<T>,
  verbose: boolean,
): Promise<T | undefined> {
  const view = new BuildProgressView({ stream: process.stderr, color: colorEnabled(process.stderr), verbose });
  const controller = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    stoppedBy = signal;
    controller.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await build((event) => view.event(event), controller.signal);
  } catch (error) {
    view.close();
    for (const line of view.tail()) process.stderr.write(`  | ${line}\n`);
    process.stderr.write(`${prefix}: ${errorMessage(error)}${isToolcellError(error) ? ` [${error.code}]` : ''}\n`);
    process.exitCode = stoppedBy ? exitCodeForSignal(stoppedBy) : EXIT_FAILURE;
    return undefined;
  } finally {
    view.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
