import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ToolcellError, ToolErrorType } from '../errors.js';
import { workerEntry } from '../paths.js';
import type { AnyToolDefinition, WorkspaceInfo } from '../tools/define-tool.js';
import { DefinedTool, type RunOptions, type ToolRunner } from '../tools/defined-tool.js';
import { toolErrorResult } from '../tools/results.js';
import type { Tool, ToolConfirmationDetails, ToolResult, ToolResultError, UpdateOutput } from '../tools/tool.js';
import { builtinToolModuleUrl } from './builtin-module.js';
import { loadToolModule } from './tool-module.js';
import type { PortMessage, ToolTask, ToolTaskResult, ToolWorkerData } from './worker-protocol.js';

export interface WorkerPoolOptions {
  /** Threads kept running. Default: the number of CPUs. */
  threads?: number;
  /** V8 old-generation heap limit per worker, in MB. A tool that exceeds it gets `worker_out_of_memory`. Default 512. */
  maxHeapMb?: number;
  /** Per-call time limit in ms; the call then ends with `execution_timeout`. Default 120,000. */
  callTimeoutMs?: number;
  /** How long a cancelled call may take to stop by itself before its worker is terminated. Default 1,000 ms. */
  cancelGraceMs?: number;
  /** Extra tool modules (URLs of modules exporting `tools`) the workers may run, besides the built-ins. */
  toolModules?: readonly (string | URL)[];
}

function positiveInteger(options: WorkerPoolOptions, key: keyof WorkerPoolOptions, fallback: number): number {
  const value = options[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new RangeError(`WorkerPool: options.${key} must be a positive integer, not ${String(value)}`);
  }
  return value;
}

/**
 * Runs trusted tool definitions in Piscina worker threads. Abort is
 * cooperative first (a `cancel` on the call's MessagePort aborts the tool's
 * signal); a call that does not stop within `cancelGraceMs`, loops forever or
 * blocks its thread is ended by terminating its worker, which Piscina
 * replaces, so the next call works.
 */
export class WorkerPool implements ToolRunner {
  readonly #piscina: Piscina<ToolTask, ToolTaskResult>;
  readonly #toolModules: string[];
  readonly #callTimeoutMs: number;
  readonly #cancelGraceMs: number;
  #closed = false;

  constructor(options: WorkerPoolOptions = {}) {
    const threads = positiveInteger(options, 'threads', availableParallelism());
    const maxHeapMb = positiveInteger(options, 'maxHeapMb', 512);
    this.#callTimeoutMs = positiveInteger(options, 'callTimeoutMs', 120_000);
    this.#cancelGraceMs = positiveInteger(options, 'cancelGraceMs', 1_000);
    this.#toolModules = [builtinToolModuleUrl, ...(options.toolModules ?? []).map(String)];
    this.#piscina = new Piscina<ToolTask, ToolTaskResult>({
      filename: workerEntry('tools').href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
      workerData: { toolModules: this.#toolModules } satisfies ToolWorkerData,
    });
    // A worker that dies (heap limit, crash) fails its task; Piscina replaces it. Nothing to do here.
    this.#piscina.on('error', () => {});
  }

  /**
   * Tools for every definition of the built-ins and the extra tool modules,
   * executing in this pool and confined to `workspace`.
   */
  async createTools(options: { workspace: WorkspaceInfo }): Promise<Tool<unknown>[]> {
    const tools: Tool<unknown>[] = [];
    for (const [index, url] of this.#toolModules.entries()) {
      for (const definition of await loadToolModule(url)) {
        tools.push(new DefinedTool({ definition, runner: this, workspace: options.workspace, source: index === 0 ? { type: 'builtin' } : { type: 'local' } }));
      }
    }
    return tools;
  }

  async confirm(definition: AnyToolDefinition, params: unknown, options: RunOptions): Promise<ToolConfirmationDetails | false> {
    const outcome = await this.#run({ op: 'confirm', definition, params, ...options });
    if (outcome.kind === 'error') throw new ToolcellError(outcome.error.type, outcome.error.message);
    return outcome.kind === 'details' ? outcome.details : false;
  }

  async execute(definition: AnyToolDefinition, params: unknown, options: RunOptions & { updateOutput?: UpdateOutput }): Promise<ToolResult> {
    const outcome = await this.#run({ op: 'execute', definition, params, ...options });
    if (outcome.kind === 'error') return toolErrorResult(outcome.error.type, outcome.error.message);
    return outcome.kind === 'result' ? outcome.result : toolErrorResult(ToolErrorType.EXECUTION_FAILED, 'worker returned no result');
  }

  async #run(input: {
    op: ToolTask['op'];
    definition: AnyToolDefinition;
    params: unknown;
    signal: AbortSignal;
    workspace: WorkspaceInfo;
    updateOutput?: UpdateOutput;
  }): Promise<{ kind: 'result'; result: ToolResult } | { kind: 'details'; details: ToolConfirmationDetails | false } | { kind: 'error'; error: ToolResultError }> {
    if (this.#closed) throw new Error('WorkerPool is closed');
    const { port1, port2 } = new MessageChannel();
    const terminate = new AbortController();
    let timedOut = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const requestCancel = () => {
      if (graceTimer) return;
      port1.postMessage({ type: 'cancel' } satisfies PortMessage);
      graceTimer = setTimeout(() => terminate.abort(), this.#cancelGraceMs);
    };
    // The time limit counts execution, not time spent queued behind other calls.
    let timeout: NodeJS.Timeout | undefined;
    const updateOutput = input.updateOutput;
    port1.on('message', (message: PortMessage) => {
      if (message.type === 'output') updateOutput?.(message.output);
      else if (message.type === 'started' && !timeout) {
        timeout = setTimeout(() => {
          timedOut = true;
          requestCancel();
        }, this.#callTimeoutMs);
      }
    });
    if (input.signal.aborted) requestCancel();
    else input.signal.addEventListener('abort', requestCancel, { once: true });

    const fail = (type: ToolErrorType, message: string) => ({ kind: 'error' as const, error: { type, message } });
    try {
      const task: ToolTask = { op: input.op, toolName: input.definition.name, params: input.params, workspace: input.workspace, port: port2 };
      const reply = await this.#piscina.run(task, { transferList: [port2], signal: terminate.signal });
      if (timedOut) return fail(ToolErrorType.EXECUTION_TIMEOUT, `Tool "${input.definition.name}" exceeded its time limit of ${this.#callTimeoutMs} ms and was stopped.`);
      if (!reply.ok) return fail(reply.code as ToolErrorType, reply.message);
      return reply.op === 'confirm' ? { kind: 'details', details: reply.details } : { kind: 'result', result: reply.result };
    } catch (error) {
      const name = input.definition.name;
      if (timedOut) return fail(ToolErrorType.EXECUTION_TIMEOUT, `Tool "${name}" exceeded its time limit of ${this.#callTimeoutMs} ms; its worker was terminated.`);
      if (terminate.signal.aborted) return fail(ToolErrorType.CANCELLED, `Tool "${name}" did not stop within ${this.#cancelGraceMs} ms of being cancelled; its worker was terminated.`);
      const code = (error as { code?: unknown }).code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') return fail(ToolErrorType.WORKER_OUT_OF_MEMORY, `Tool "${name}" ran out of memory (worker heap limit reached); its worker was replaced.`);
      return fail(ToolErrorType.WORKER_CRASHED, `Tool "${name}" crashed its worker: ${(error as Error)?.message ?? String(error)}`);
    } finally {
      clearTimeout(timeout);
      clearTimeout(graceTimer);
      input.signal.removeEventListener('abort', requestCancel);
      port1.close();
    }
  }

  /** Stops every worker. Running calls fail. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#piscina.destroy();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
