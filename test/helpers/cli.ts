import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { withTestRuntimeArgs } from './test-runtime.js';
import { withSuiteEngineArgs } from './engine-priority.js';

/** The compiled CLI entry. */
export const cliPath = join(packageRoot, 'dist', 'src', 'cli', 'bin.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `toolcell ARGS` as a real process, writing `input` to its stdin.
 * `onStdout` sees output as it arrives (e.g. to send SIGINT at the right moment).
 */
export function runCli(
  args: string[],
  options: {
    input?: string | Buffer;
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    onSpawn?: (pid: number) => void;
    onStderr?: (text: string, kill: (signal: NodeJS.Signals) => void) => void;
  } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...withSuiteEngineArgs(withTestRuntimeArgs(args))], {
      cwd: options.cwd ?? packageRoot,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      options.onStderr?.(stderr, (signal) => child.kill(signal));
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    if (child.pid) options.onSpawn?.(child.pid);
    child.stdin.on('error', () => {}); // the CLI may exit before reading everything (e.g. input too large)
    child.stdin.end(options.input ?? '');
  });
}

/** Runs `toolcell exec --json` on a batch and returns the parsed parts. */
export async function execJson(
  workspace: string,
  calls: unknown,
  extraArgs: string[] = [],
): Promise<{
  result: CliResult;
  parts: Array<{ functionResponse?: { id: string; name: string; response: Record<string, unknown> }; inlineData?: { mimeType: string; data: string } }>;
}> {
  const result = await runCli(['exec', '--workspace', workspace, '--json', ...extraArgs], { input: JSON.stringify(calls) });
  if (result.code !== 0) throw new Error(`toolcell exec exited ${result.code}: ${result.stderr}`);
  return { result, parts: JSON.parse(result.stdout) };
}
