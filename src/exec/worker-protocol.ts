import type { MessagePort } from 'node:worker_threads';
import type { WorkspaceInfo } from '../tools/define-tool.js';
import type { LiveOutput, ToolConfirmationDetails, ToolResult } from '../tools/tool.js';

/**
 * One task for the tool worker (workers/tools.ts). Everything here crosses a
 * structured clone; `port` is transferred and carries cancel requests down
 * and live output up for this call only.
 */
export interface ToolTask {
  op: 'confirm' | 'execute';
  toolName: string;
  params: unknown;
  workspace: WorkspaceInfo;
  port: MessagePort;
}

/** Messages on a call's port. */
export type PortMessage =
  | { type: 'cancel' } // main → worker: abort the tool's signal
  | { type: 'started' } // worker → main: the task left the queue; its time limit starts now
  | { type: 'output'; output: LiveOutput }; // worker → main

/** What the worker returns; errors are data so their code survives the clone. */
export type ToolTaskResult =
  | { ok: true; op: 'confirm'; details: ToolConfirmationDetails | false }
  | { ok: true; op: 'execute'; result: ToolResult }
  | { ok: false; code: string; message: string };

/** workerData of every tool worker: the modules whose `tools` export it may run. */
export interface ToolWorkerData {
  toolModules: string[];
}
