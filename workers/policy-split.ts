/**
 * Entry of the policy's parse thread: splits shell commands into simple
 * commands off the main thread, so a long or pathological command costs
 * this thread's time, never the server's event loop. Started by SplitThread
 * (src/policy/split-thread.ts), which ends it when a parse runs past its budget.
 */
import { parentPort } from 'node:worker_threads';
import type { SplitRequest, SplitResponse } from '../src/policy/split-thread.js';
import { splitCommand } from '../src/policy/split-command.js';

if (!parentPort) throw new Error('workers/policy-split.js must be started as a worker thread (by SplitThread)');
const port = parentPort;
port.on('message', (request: SplitRequest) => {
  let response: SplitResponse;
  try {
    response = { id: request.id, commands: splitCommand(request.command) };
  } catch (error) {
    response = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(response);
});
