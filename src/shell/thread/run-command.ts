import type { MessagePort } from 'node:worker_threads';
import { ToolErrorType, errorMessage, isToolcellError } from '../../errors.js';
import type { OutputBudget, ShellSession, SpawnedProcess } from '../../backends/backend.js';
import { OutputPipeline, type OutputLimits } from '../output/output-pipeline.js';
import { OutputSaver, type StopReason } from '../output/output-saver.js';
import type { RunControl, RunEvent, RunRequest, WireError } from '../protocol.js';
import type { ShellRunResult } from '../run-types.js';
import type { SecretRedactor } from '../../secrets/secret-redactor.js';

export interface RunCommandOptions {
  session: ShellSession;
  request: RunRequest;
  /** Environment built for the session's backend (allowlist + request values). */
  env: Record<string, string>;
  port: MessagePort;
  limits: OutputLimits;
  killGraceMs: number;
  /** Size cap of a saved output (`request.saveOutput`). */
  savedOutputMaxBytes: number;
  /** Past the output budget, bytes per second a container reads from the command (0: as fast as it writes). */
  drainBytesPerSecond: number;
  /** The session's secrets, removed from everything the command prints before it leaves this thread. */
  redactor?: SecretRedactor;
}

/**
 * Runs one command in the shell thread and answers on its port: throttled
 * `output` events while it runs, then one `result` (or `error` when it could
 * not start). A cancel on the port, the inactivity limit or the wall-clock
 * limit ends the whole process tree; the result keeps the partial output.
 * A foreground command's leftovers are killed when it exits.
 */
export async function runCommand(options: RunCommandOptions): Promise<void> {
  const { request, port } = options;
  const send = (event: RunEvent): void => port.postMessage(event);
  let stopReason: StopReason | null = null;
  let spawned: SpawnedProcess | undefined;
  let killing: Promise<void> | undefined;
  const stop = (reason: StopReason): void => {
    if (stopReason) return;
    stopReason = reason;
    if (spawned) killing = spawned.kill({ graceMs: options.killGraceMs });
  };
  port.on('message', (message: RunControl) => {
    if (message?.type === 'cancel') stop('cancel');
  });

  const { redactor } = options;
  const redact = redactor ? (text: string) => redactor.redact(text) : undefined;
  const pipeline = new OutputPipeline({
    mode: request.mode,
    limits: options.limits,
    ...(request.live ? { onLive: (output) => send({ type: 'output', output }) } : {}),
    ...(redact ? { redact } : {}),
  });
  try {
    spawned = await options.session.spawn({
      outputBudget: outputBudget(options, pipeline),
      command: request.command,
      cwd: request.cwd,
      env: options.env,
      mode: request.mode,
      cols: options.limits.cols,
      rows: options.limits.rows,
      background: request.background,
      ...(request.stdin ? { stdin: request.stdin } : {}),
    });
  } catch (error) {
    pipeline.dispose();
    send({ type: 'error', error: toWireError(error) });
    return;
  }

  if (request.background) {
    pipeline.dispose();
    const result: ShellRunResult = {
      ...emptyResult(spawned.pid),
      backgroundPid: spawned.pid,
      ...(spawned.logPath ? { logPath: spawned.logPath } : {}),
    };
    send({ type: 'result', result });
    return;
  }

  // A cancel that arrived while the command was starting.
  if (stopReason) killing = spawned.kill({ graceMs: options.killGraceMs });
  const timers = startTimers(request, stop);
  const saver = request.saveOutput
    ? new OutputSaver({
        mode: request.mode,
        path: request.saveOutput.path,
        afterChars: request.saveOutput.afterChars,
        maxBytes: options.savedOutputMaxBytes,
        ...(redact ? { redact } : {}),
      })
    : undefined;
  // The secrets go first, on the raw bytes of each stream: before rendering, the caps and the
  // saved file, so no cut can leave part of one on either side (the text is redacted again
  // after rendering, for a secret an escape sequence or a line wrap had split).
  const streams = redactor ? { stdout: redactor.byteStream(), stderr: redactor.byteStream() } : undefined;
  const deliver = (chunk: Uint8Array, stream: 'stdout' | 'stderr'): void => {
    if (chunk.length === 0) return;
    pipeline.push(chunk, stream);
    if (saver && !pipeline.binary) saver.push(chunk, stream);
  };
  const flushStreams = (): void => {
    if (streams) for (const stream of ['stdout', 'stderr'] as const) deliver(streams[stream].flush(), stream);
  };
  // Before onData: a report of dropped output comes in order with the chunks around it.
  spawned.onSkipped?.((skipped) => {
    timers.activity();
    flushStreams();
    pipeline.skip(skipped);
    saver?.skip();
  });
  spawned.onData((chunk, stream) => {
    timers.activity();
    deliver(streams ? streams[stream].push(chunk) : chunk, stream);
  });
  const status = await spawned.exited;
  flushStreams();
  timers.clear();
  // Whatever the command left running (children, `&` jobs) ends with it.
  await (killing ?? spawned.kill({ graceMs: options.killGraceMs })).catch(() => {});
  const rendered = await pipeline.finish();
  const reason = stopReason as StopReason | null;
  let savedOutput: ShellRunResult['savedOutput'];
  if (saver && rendered.binary) await saver.discard();
  else if (saver) savedOutput = await saver.finish({ bytes: rendered.totalBytes, lines: rendered.totalLines, stopped: reason });
  send({
    type: 'result',
    result: {
      ...rendered,
      exitCode: status.exitCode,
      signal: status.signal,
      aborted: reason === 'cancel',
      timedOut: reason === 'inactivity' || reason === 'wall' ? reason : null,
      pid: spawned.pid,
      ...(savedOutput ? { savedOutput } : {}),
      ...(status.notes && status.notes.length > 0 ? { notes: status.notes } : {}),
    },
  });
}

/**
 * What the sandbox sends in full: every byte this command's output can still
 * use (the rendered part, or a saved output's whole file), then each
 * stream's end as far as the pipeline and the saver's excerpt keep it. Past
 * that a flood is only counted, in the container, on its own CPU share.
 */
function outputBudget(options: RunCommandOptions, pipeline: OutputPipeline): OutputBudget {
  const saving = options.request.saveOutput;
  return {
    forwardBytes: Math.max(options.limits.maxBytes, saving ? options.savedOutputMaxBytes : 0),
    tailBytes: Math.max(pipeline.tailBytesPerStream, saving ? OutputSaver.rawTailBytes(saving.afterChars) : 0),
    drainBytesPerSecond: options.drainBytesPerSecond,
  };
}

/** Inactivity and wall-clock limits. Output moves a timestamp; the timer re-arms itself lazily. */
function startTimers(request: RunRequest, stop: (reason: StopReason) => void): { activity(): void; clear(): void } {
  let lastActivity = performance.now();
  let inactivityTimer: NodeJS.Timeout | undefined;
  let wallTimer: NodeJS.Timeout | undefined;
  const inactivityMs = request.inactivityMs;
  if (inactivityMs > 0) {
    const check = (): void => {
      const idle = performance.now() - lastActivity;
      if (idle >= inactivityMs) stop('inactivity');
      else inactivityTimer = setTimeout(check, inactivityMs - idle);
    };
    inactivityTimer = setTimeout(check, inactivityMs);
  }
  if (request.wallMs !== undefined && request.wallMs > 0) wallTimer = setTimeout(() => stop('wall'), request.wallMs);
  return {
    activity: () => {
      lastActivity = performance.now();
    },
    clear: () => {
      clearTimeout(inactivityTimer);
      clearTimeout(wallTimer);
    },
  };
}

function emptyResult(pid: number): ShellRunResult {
  return { output: '', exitCode: null, signal: null, aborted: false, timedOut: null, binary: null, truncated: false, totalBytes: 0, totalLines: 0, pid };
}

/** A stable code and message for any thrown value. */
export function toWireError(error: unknown): WireError {
  if (isToolcellError(error)) return { code: error.code, message: error.message };
  return { code: ToolErrorType.SHELL_EXECUTE_ERROR, message: errorMessage(error) };
}
