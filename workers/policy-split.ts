/**
 * Entry of the policy's parse thread: splits shell commands into simple
 * commands and judges them against the rules off the main thread, so a long
 * or pathological command costs this thread's time, never the server's
 * event loop; only the verdicts go back. Started by SplitThread
 * (src/policy/split-thread.ts), which ends it when a command runs past its budget.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { alwaysAllowPrefixes } from '../src/policy/allowed-in-chat.js';
import { judgeLayer } from '../src/policy/policy-verdict.js';
import { splitCommand } from '../src/policy/split-command.js';
import type { ThreadRequest, ThreadResponse } from '../src/policy/split-thread.js';
import { threadCpuStopwatch } from './thread-cpu.js';
import { lowerThisThreadPriority } from './thread-priority.js';

if (!parentPort) throw new Error('workers/policy-split.js must be started as a worker thread (by SplitThread)');
const port = parentPort;
// The thread for long commands runs at a lower priority (workerData.nice): a tenant sending 128 KiB
// commands one after another keeps it busy, and on a small host that must not take the CPU from
// the threads every tenant's calls go through.
lowerThisThreadPriority((workerData as { nice?: unknown } | undefined)?.nice);
port.on('message', (request: ThreadRequest) => {
  const cpuUsed = threadCpuStopwatch();
  let response: ThreadResponse;
  try {
    const commands = splitCommand(request.command);
    response =
      request.kind === 'judge'
        ? { id: request.id, verdicts: request.layers.map((layer) => judgeLayer(layer, commands)) }
        : { id: request.id, prefixes: alwaysAllowPrefixes(commands) };
  } catch (error) {
    response = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage({ ...response, cpuMs: cpuUsed() } satisfies ThreadResponse);
});
