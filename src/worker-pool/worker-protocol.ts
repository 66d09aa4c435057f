import type { ErrorCode } from '../errors.js';
import type { MessagePort } from 'node:worker_threads';
import type { CancelBoardMemory } from './cancel-board.js';
import type { WorkspaceInfo } from '../tools/define-tool.js';
import type { LiveOutput, ToolConfirmationDetails, ToolResult } from '../tools/tool.js';

/**
 * One task for the tool worker (workers/tools.ts). Everything here crosses a
 * structured clone. Cancellation goes through the call's `slot` on the shared
 * cancel board; `port`, only for tools that stream output, is transferred and
 * carries live output up for this call only.
 */
export interface ToolTask {
  op: 'confirm' | 'execute';
  toolName: string;
  params: unknown;
  workspace: WorkspaceInfo;
  slot: number;
  port?: MessagePort;
}

/**
 * What the pool posts to a worker: one task, or a group of tasks gathered
 * when many calls were queued at once (the worker runs them in order and
 * answers with their results in the same order).
 */
export type WorkerMessage = { task: ToolTask; group?: undefined } | { group: ToolTask[]; task?: undefined };

/**
 * Messages on a call's output port (worker → main). `end` is the last one:
 * the port is a different channel from the one the result comes back on, so
 * the pool waits for it before closing the port, or the last updates are lost.
 */
export type PortMessage = { type: 'output'; output: LiveOutput } | { type: 'end' };

/** What the worker returns; errors are data so their code survives the clone. */
export type ToolTaskResult = (
  | { ok: true; op: 'confirm'; details: ToolConfirmationDetails | false }
  | { ok: true; op: 'execute'; result: ToolResult }
  | { ok: false; code: ErrorCode; message: string }
) & {
  /** The worker thread's CPU time for this task, in ms (what a caller's WorkBudget is charged). */
  cpuMs?: number;
};

/** workerData of every tool worker: the modules whose `tools` export it may run. */
export interface ToolWorkerData {
  toolModules: string[];
  board: CancelBoardMemory;
  /** The threads' OS priority (WorkerPoolOptions.threadNice). */
  nice: number;
}
