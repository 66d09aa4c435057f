/**
 * Entry of the answer-encoding thread: turns a large JSON-RPC message into
 * the UTF-8 bytes of its JSON text, the very bytes `JSON.stringify` and a
 * TextEncoder give on the main thread, and hands them back without a copy.
 * A tenant's 25 MB image answer cost the server's event loop 0.3-0.8 s of
 * stringifying and encoding on a busy host, in which no other tenant's call
 * moved. Started by JsonEncodeThread (src/mcp/server/json-encode-thread.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { EncodeRequest, EncodeResponse } from '../src/mcp/server/json-encode-thread.js';
import { threadCpuStopwatch } from './thread-cpu.js';
import { lowerThisThreadPriority } from './thread-priority.js';

if (!parentPort) throw new Error('workers/json-encode.js must be started as a worker thread (by JsonEncodeThread)');
const port = parentPort;
// Below the event loop and the shell thread: encoding one tenant's big answers must not take their CPU.
lowerThisThreadPriority((workerData as { nice?: unknown } | undefined)?.nice);
port.on('message', (request: EncodeRequest) => {
  const cpuUsed = threadCpuStopwatch();
  try {
    const encoded = Buffer.from(JSON.stringify(request.value), 'utf8');
    // A large Buffer has an ArrayBuffer of its own, handed over as it is; a small one shares the pool's, so it is copied out.
    const own =
      encoded.byteOffset === 0 && encoded.byteLength === encoded.buffer.byteLength
        ? encoded.buffer
        : encoded.buffer.slice(encoded.byteOffset, encoded.byteOffset + encoded.byteLength);
    port.postMessage({ id: request.id, bytes: own, cpuMs: cpuUsed() } satisfies EncodeResponse, [own as ArrayBuffer]);
  } catch (error) {
    port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error), cpuMs: cpuUsed() } satisfies EncodeResponse);
  }
});
