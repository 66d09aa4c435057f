/**
 * A reader that closes the CLI's output early (`toolcell --help | head -1`)
 * costs the CLI the rest of its output, nothing else: it ends as it would
 * have, without an EPIPE stack trace.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { cliPath } from '../helpers/cli.js';

/** Runs the CLI with its stdout's reading end closed before the CLI writes anything. */
function runWithStdoutClosed(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  // Closed at once: the CLI takes far longer to start than this takes to run.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

for (const args of [['--help'], ['tools', '--help'], ['--version']]) {
  test(`toolcell ${args.join(' ')} into a closed pipe ends with its own exit code and no stack trace`, async (t) => {
    const { code, stderr } = await runWithStdoutClosed(args);
    t.is(code, 0, stderr);
    t.notRegex(stderr, /EPIPE|Error/);
  });
}
