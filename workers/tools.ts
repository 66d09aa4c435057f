/**
 * Piscina worker entry: runs trusted tool definitions (built-in file tools
 * and modules the embedding program registered) off the main thread. Worker
 * threads are not a security boundary: nothing untrusted runs here.
 */
import { threadId, workerData } from 'node:worker_threads';
import { errorMessage, isToolcellError, ToolErrorType } from '../src/errors.js';
import { SlotWatcher } from '../src/worker-pool/cancel-board.js';
import { LazyAbort } from '../src/worker-pool/lazy-abort.js';
import { loadToolModule } from '../src/worker-pool/tool-module.js';
import type { PortMessage, ToolTask, ToolTaskResult, ToolWorkerData, WorkerMessage } from '../src/worker-pool/worker-protocol.js';
import type { AnyToolDefinition, ToolContext } from '../src/tools/define-tool.js';
import { threadCpuStopwatch } from './thread-cpu.js';
import { lowerThisThreadPriority } from './thread-priority.js';

lowerThisThreadPriority((workerData as ToolWorkerData).nice);

const catalog = new Map<string, AnyToolDefinition>();
for (const url of (workerData as ToolWorkerData).toolModules) {
  for (const definition of await loadToolModule(url)) catalog.set(definition.name, definition);
}

const slots = new SlotWatcher((workerData as ToolWorkerData).board, { pollMs: 10, threadId });

/**
 * The pool keeps more than one task posted to each worker, so that a worker
 * never sits idle waiting for the main thread between two calls; they run
 * here one at a time, in order. A task waiting its turn has not started (its
 * slot says so), so when the pool must end this thread because the running
 * call will not stop, it can run the waiting ones again on another worker
 * instead of failing them.
 */
let previous: Promise<unknown> = Promise.resolve();

export default function runToolTask(message: WorkerMessage): Promise<ToolTaskResult | ToolTaskResult[]> {
  const turn = message.group ? previous.then(() => runGroup(message.group)) : previous.then(() => runOne(message.task));
  previous = turn.catch(() => undefined);
  return turn;
}

/** A group's calls, one after another; each waits (not started) until its turn. */
async function runGroup(group: ToolTask[]): Promise<ToolTaskResult[]> {
  const results: ToolTaskResult[] = [];
  for (const task of group) results.push(await runOne(task));
  return results;
}

/** One call, with the CPU time it took this thread (one call runs at a time here, so the thread's time is the call's). */
async function runOne(task: ToolTask): Promise<ToolTaskResult> {
  const cpuUsed = threadCpuStopwatch();
  const result = await runCall(task);
  return { ...result, cpuMs: cpuUsed() };
}

async function runCall(task: ToolTask): Promise<ToolTaskResult> {
  const { port } = task;
  const controller = new LazyAbort();
  try {
    // Cancelled while it waited (the pool may have reported it cancelled already): it never runs.
    if (!slots.start(task.slot, controller))
      return { ok: false, code: ToolErrorType.CANCELLED, message: `Tool "${task.toolName}" was cancelled before it started.` };
    const definition = catalog.get(task.toolName);
    if (!definition) return { ok: false, code: ToolErrorType.TOOL_NOT_REGISTERED, message: `No tool "${task.toolName}" in this worker's tool modules.` };
    const context: ToolContext = {
      get signal() {
        return controller.signal;
      },
      updateOutput: port ? (output) => port.postMessage({ type: 'output', output } satisfies PortMessage) : () => {},
      workspace: task.workspace,
    };
    if (task.op === 'confirm') {
      const details = definition.confirm ? await definition.confirm(task.params, context) : false;
      return { ok: true, op: 'confirm', details };
    }
    return { ok: true, op: 'execute', result: await definition.execute(task.params, context) };
  } catch (error) {
    return { ok: false, code: isToolcellError(error) ? error.code : ToolErrorType.EXECUTION_FAILED, message: errorMessage(error) };
  } finally {
    slots.finish(task.slot);
    port?.postMessage({ type: 'end' } satisfies PortMessage);
    port?.close();
  }
}
