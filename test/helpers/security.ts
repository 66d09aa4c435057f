/**
 * Shared machinery of the adversarial suite (test/security/): a workspace, a
 * sandbox session driven through the public library API (createRuntime →
 * Scheduler → run_shell_command / the built-in file tools in the worker
 * pool), a runner for the public CLI (`toolcell exec --json`), and the
 * checks every attack ends with: nothing of the call survives, and the next
 * call in the same session still works.
 *
 * Docker is required: each file gates itself with requireDocker from
 * test/helpers/docker.ts, which fails under CI=true when the engine or the
 * image is missing and skips with a message elsewhere.
 */
import type { ExecutionContext } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { chown, mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Part } from '@google/genai';
import { createRuntime, type Runtime } from '../../src/runtime/runtime.js';
import { packageRoot } from '../../src/paths.js';
import type { CompletedToolCall } from '../../src/scheduler/tool-call.js';
import { commandProcesses as commandProcessRows, makeWorkspace } from './docker.js';
import { giveWorkspaceToSandboxUser, TEST_RUNTIME, testSandboxRuntime } from './test-runtime.js';

/** Wall-clock limit (seconds) the suite gives each shell command unless a test says otherwise. */
export const SUITE_TIMEOUT_SECONDS = 20;

/** The model-facing outcome of one call, as the model would receive it. */
export interface CallOutcome {
  callId: string;
  status: 'success' | 'error' | 'cancelled';
  /** The functionResponse's `response` object. */
  response: Record<string, unknown>;
  /** Everything the model reads for this call: `output`, then `error`, as text. */
  text: string;
  /**
   * For run_shell_command, only what the command printed (the `Output:`
   * section of Gemini CLI's result block), so that assertions are not fooled
   * by the echoed `Command:` line; for other tools, the same as `text`.
   */
  output: string;
  /** run_shell_command's `Exit Code:` (null when none, e.g. killed by a signal). */
  exitCode: number | null;
  /** Stable error type when the call failed or was cancelled. */
  errorType?: string;
  /** What people see (`resultDisplay`), as text. */
  display: string;
  durationMs: number;
}

/** A fresh, real-path temporary folder, removed when the test ends (docker.ts's makeWorkspace). */
export function makeTempDir(t: ExecutionContext, prefix = 'toolcell-sec-'): Promise<string> {
  return makeWorkspace(t, prefix);
}

/** A random marker that cannot appear in output by chance. */
export function nonce(label = 'n'): string {
  return `${label}-${randomBytes(8).toString('hex')}`;
}

let callCounter = 0;

function outcomeOf(call: CompletedToolCall): CallOutcome {
  const part = call.response.responseParts[0];
  const response = (part?.functionResponse?.response ?? {}) as Record<string, unknown>;
  const pieces: string[] = [];
  if (response['output'] !== undefined) pieces.push(String(response['output']));
  if (response['error'] !== undefined) pieces.push(String(response['error']));
  const display = call.response.resultDisplay;
  const text = pieces.join('\n');
  const block = call.request.name === 'run_shell_command' ? parseShellBlock(text) : undefined;
  return {
    callId: call.request.callId,
    status: call.status,
    response,
    text,
    output: block?.output ?? text,
    exitCode: block?.exitCode ?? null,
    ...(call.response.error ? { errorType: call.response.error.type } : {}),
    display: typeof display === 'string' ? display : display ? JSON.stringify(display) : '',
    durationMs: call.durationMs,
  };
}

/**
 * Splits run_shell_command's result block (Command / Directory / Output /
 * Error / Exit Code / Signal / Background PIDs / Process Group PGID) from its
 * fixed trailing lines, so output that itself contains such words is kept.
 */
export function parseShellBlock(text: string): { output: string; exitCode: number | null } | undefined {
  const directory = text.indexOf('\nDirectory: ');
  const start = directory === -1 ? -1 : text.indexOf('\nOutput: ', directory);
  const tail = /\nError: [^\n]*\nExit Code: ([^\n]*)\nSignal: [^\n]*\nBackground PIDs: [^\n]*\nProcess Group PGID: [^\n]*$/.exec(text);
  if (start === -1 || !tail) return undefined;
  const output = text.slice(start + '\nOutput: '.length, tail.index);
  const code = Number(tail[1]);
  return { output: output === '(empty)' ? '' : output, exitCode: Number.isInteger(code) ? code : null };
}

export interface SessionOptions {
  /** Defaults to a fresh temporary folder, owned by `owner`. */
  workspace?: string;
  timeoutSeconds?: number;
  /** The sandbox's OCI runtime; default the suite's (TOOLCELL_TEST_RUNTIME, else the engine's). */
  runtime?: string;
  /**
   * Who owns the fresh workspace, and so whom commands run as: default
   * TOOLCELL_TEST_WORKSPACE_OWNER (`UID:GID`, needs root), else the test
   * process (root here: commands run as uid 0), except under gVisor, which
   * refuses uid-0 commands: there the image's `sandbox` user (test-runtime.ts).
   * Run the suite once each way.
   */
  owner?: { uid: number; gid: number };
}

/** The owner the suite's fresh workspaces get (SessionOptions.owner). */
export function suiteWorkspaceOwner(): { uid: number; gid: number } | undefined {
  const value = process.env['TOOLCELL_TEST_WORKSPACE_OWNER'];
  if (value === undefined || value === '') return undefined;
  const match = /^(\d+):(\d+)$/.exec(value);
  if (!match) throw new Error(`TOOLCELL_TEST_WORKSPACE_OWNER must be UID:GID, got ${JSON.stringify(value)}`);
  return { uid: Number(match[1]), gid: Number(match[2]) };
}

/**
 * One sandbox session, driven exactly as a library user would: a runtime
 * for the workspace (sandbox `docker`, approval `yolo` so nothing asks) and
 * one scheduler batch per call. Sequential calls share the session's
 * container, which is what "the next call still works" is about.
 */
export class SandboxSession {
  readonly workspace: string;
  readonly runtime: Runtime;

  private constructor(workspace: string, runtime: Runtime) {
    this.workspace = workspace;
    this.runtime = runtime;
  }

  static async open(options: SessionOptions = {}): Promise<SandboxSession> {
    let workspace = options.workspace;
    if (workspace === undefined) {
      workspace = await realpath(await mkdtemp(join(tmpdir(), 'toolcell-sec-ws-')));
      const owner = options.owner ?? suiteWorkspaceOwner();
      if (owner !== undefined) await chown(workspace, owner.uid, owner.gid);
      else await giveWorkspaceToSandboxUser(workspace, options.runtime);
    }
    const runtime = await createRuntime({
      workspace,
      approvalMode: 'yolo',
      sandbox: 'docker',
      ...(options.runtime !== undefined ? { sandboxRuntime: options.runtime } : testSandboxRuntime()),
      timeoutSeconds: options.timeoutSeconds ?? SUITE_TIMEOUT_SECONDS,
      onWarning: () => {},
    });
    return new SandboxSession(workspace, runtime);
  }

  /** Runs a batch through a new scheduler (one batch at a time per scheduler). */
  async batch(calls: ReadonlyArray<{ name: string; args: Record<string, unknown> }>, signal?: AbortSignal): Promise<CallOutcome[]> {
    const requests = calls.map((call) => ({ callId: `sec-${++callCounter}`, name: call.name, args: call.args }));
    const completed = await this.runtime.createScheduler().schedule(requests, signal ?? new AbortController().signal);
    return completed.map(outcomeOf);
  }

  async tool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallOutcome> {
    const [outcome] = await this.batch([{ name, args }], signal);
    if (!outcome) throw new Error(`no outcome for ${name}`);
    return outcome;
  }

  /** run_shell_command, as the model would call it. */
  shell(command: string, options: { background?: boolean; dirPath?: string; signal?: AbortSignal } = {}): Promise<CallOutcome> {
    return this.tool(
      'run_shell_command',
      {
        command,
        ...(options.background ? { is_background: true } : {}),
        ...(options.dirPath ? { dir_path: options.dirPath } : {}),
      },
      options.signal,
    );
  }

  /**
   * Runs `command` and cancels it, as a user's Ctrl+C would, as soon as
   * `marker` shows in its live output (so the attack is known to be under
   * way), or after `fallbackMs` when it never does.
   */
  async shellCancelledOn(command: string, marker: string, fallbackMs = 8000): Promise<CallOutcome> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), fallbackMs);
    const scheduler = this.runtime.createScheduler({
      onOutput: (_callId, output) => {
        if (typeof output === 'string' && output.includes(marker)) controller.abort();
      },
    });
    try {
      const [call] = await scheduler.schedule([{ callId: `sec-${++callCounter}`, name: 'run_shell_command', args: { command } }], controller.signal);
      if (!call) throw new Error('no outcome');
      return outcomeOf(call);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The proof that an attack left the session usable: a fresh call echoes a
   * nonce back, and it succeeds.
   */
  async assertAlive(t: ExecutionContext, label = 'next call'): Promise<void> {
    const marker = nonce('alive');
    const outcome = await this.shell(`echo ${marker}`);
    t.is(outcome.status, 'success', `${label}: ${outcome.text.slice(0, 500)}`);
    t.is(outcome.output.trim(), marker, `${label} must print its marker; got: ${outcome.text.slice(0, 500)}`);
  }

  /** IDs of the session's running containers (found through the hostname the command sees). */
  async containerIds(): Promise<string[]> {
    const outcome = await this.shell('cat /etc/hostname');
    const hostname = /([0-9a-f]{12,64})/.exec(outcome.text)?.[1];
    if (!hostname) return [];
    const ids = (await dockerText(['ps', '-q', '--no-trunc'])).split('\n').filter(Boolean);
    return ids.filter((id) => id.startsWith(hostname));
  }

  async close(): Promise<void> {
    await this.runtime.close();
  }
}

/** The result of one `toolcell exec` run. */
export interface CliRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The functionResponse parts, parsed (empty when stdout was not JSON). */
  parts: Part[];
  /** `response` of each functionResponse, by call id. */
  responses: Map<string, Record<string, unknown>>;
  /** The CLI process's peak resident memory (VmHWM), sampled until it exited. */
  peakRssBytes: number;
}

export const CLI_BIN = join(packageRoot, 'dist', 'src', 'cli', 'bin.js');

/**
 * Runs `toolcell exec - --json --sandbox docker` with `calls` on stdin, as a
 * user or a reviewer would. `interruptAfterMs` sends SIGINT to the CLI then.
 */
export function runCli(
  calls: ReadonlyArray<{ name: string; args: Record<string, unknown>; id?: string }>,
  options: {
    workspace: string;
    timeoutSeconds?: number;
    env?: Record<string, string>;
    /** Sends SIGINT (or `killSignal`) to the CLI this long after it starts. */
    interruptAfterMs?: number;
    /** Sends the signal once this host path exists (a command touches it in the workspace once it is under way). */
    interruptWhenExists?: string;
    killSignal?: NodeJS.Signals;
    /** `null` leaves the flag out, so settings and the default (`auto`) decide. */
    sandbox?: string | null;
    /** Text output for people instead of `--json`. */
    text?: boolean;
    /** `--settings FILE`: the only settings file read. */
    settings?: string;
    /** `--trust-workspace`: apply the workspace's own settings file in full. */
    trustWorkspace?: boolean;
  },
): Promise<CliRun> {
  const args = [
    CLI_BIN,
    'exec',
    '-',
    '--workspace',
    options.workspace,
    '--approval',
    'yolo',
    '--timeout',
    String(options.timeoutSeconds ?? SUITE_TIMEOUT_SECONDS),
  ];
  if (options.sandbox !== null) args.push('--sandbox', options.sandbox ?? 'docker');
  if (TEST_RUNTIME !== undefined) args.push('--runtime', TEST_RUNTIME);
  if (!options.text) args.push('--json');
  if (options.settings) args.push('--settings', options.settings);
  if (options.trustWorkspace) args.push('--trust-workspace');
  const child = spawn(process.execPath, args, { env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const signal = options.killSignal ?? 'SIGINT';
  let sent = false;
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.on('error', () => {});
  child.stdin.end(JSON.stringify(calls));
  let timer: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  let peakRssBytes = 0;
  const memory = setInterval(() => {
    try {
      const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
      peakRssBytes = Math.max(peakRssBytes, kb * 1024);
    } catch {
      // exited
    }
  }, 50);
  if (options.interruptWhenExists !== undefined) {
    const path = options.interruptWhenExists;
    poll = setInterval(() => {
      if (!sent && existsSync(path)) {
        sent = true;
        child.kill(signal);
      }
    }, 100);
  }
  if (options.interruptAfterMs !== undefined) {
    timer = setTimeout(() => {
      sent = true;
      child.kill(signal);
    }, options.interruptAfterMs);
  }
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      clearInterval(memory);
      let parts: Part[] = [];
      try {
        parts = JSON.parse(stdout) as Part[];
      } catch {
        parts = [];
      }
      const responses = new Map<string, Record<string, unknown>>();
      for (const part of parts) {
        const fr = part.functionResponse;
        if (fr?.id) responses.set(fr.id, (fr.response ?? {}) as Record<string, unknown>);
      }
      resolve({ exitCode, signal, stdout, stderr, parts, responses, peakRssBytes });
    });
  });
}

/** The text of one CLI response: output then error. */
export function responseText(response: Record<string, unknown> | undefined): string {
  if (!response) return '';
  return [response['output'], response['error']]
    .filter((v) => v !== undefined)
    .map(String)
    .join('\n');
}

/**
 * Control characters that must never reach the model or a person's terminal
 * raw: ESC (CSI/OSC/DCS introducers), the 8-bit C1 set (0x80-0x9f, e.g.
 * U+009B CSI), BEL, backspace and the other C0 controls except tab and
 * newline. Carriage returns are allowed only as part of CRLF.
 */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f\u0080-\u009f]|\r(?!\n)/;

/** Fails the test when `text` carries a raw terminal control character, showing where. */
export function assertNoRawControls(t: ExecutionContext, text: string, label: string): void {
  const match = RAW_CONTROL.exec(text);
  t.is(
    match,
    null,
    match
      ? `${label} carries a raw control U+${match[0].charCodeAt(0).toString(16).padStart(4, '0')} near ${JSON.stringify(text.slice(Math.max(0, match.index - 20), match.index + 20))}`
      : label,
  );
}

/** Runs the docker CLI on the host (to inspect, never to change, the sandbox) and returns stdout. */
export function dockerText(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('docker', [...args], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker ${args.join(' ')}: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/** `docker inspect` of one object, parsed. */
export async function dockerInspect(id: string): Promise<Record<string, unknown>> {
  const [first] = JSON.parse(await dockerText(['inspect', id])) as Array<Record<string, unknown>>;
  if (!first) throw new Error(`docker inspect ${id}: nothing`);
  return first;
}

/**
 * Processes of a container that belong to commands, as `pid user args`
 * lines: everything but init, the supervisor and its reapers (docker.ts).
 */
export async function commandProcesses(containerId: string): Promise<string[]> {
  return (await commandProcessRows(containerId)).map((row) => `${row.pid} ${row.user} ${row.args}`);
}
