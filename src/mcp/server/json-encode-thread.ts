import { Worker } from 'node:worker_threads';
import { CHOSEN_WORK_THREAD_NICE } from '../../contracts/defaults.js';
import type { WorkBudget } from '../../contracts/work-budget.js';
import { workerEntry } from '../../paths.js';

/** Work for the encoding thread: one message to turn into JSON bytes. */
export interface EncodeRequest {
  id: number;
  value: unknown;
}

/** The thread's answer: the JSON text's UTF-8 bytes (transferred), or why it could not make them; and its CPU time for it, in ms. */
export type EncodeResponse = ({ id: number; bytes: ArrayBuffer | SharedArrayBuffer } | { id: number; error: string }) & { cpuMs: number };

/** Who a message's encoding is for: its CPU time is charged to `budget` (a tenant's serverCpu share), which it first waits for. */
export interface EncodeOptions {
  budget?: WorkBudget | undefined;
}

interface Pending {
  budget: WorkBudget | undefined;
  resolve(bytes: Uint8Array | undefined): void;
}

/**
 * Encodes large messages as JSON in a worker thread: the main thread only
 * posts the message (a copy of its strings) and gets the bytes back without
 * a copy. Messages are encoded in the order given. A message that cannot be
 * cloned or encoded, or a thread that fails, gives `undefined`: the caller
 * then encodes on its own thread, as it would have without this one.
 */
export class JsonEncodeThread {
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #nextId = 0;

  /** `value`'s JSON text as UTF-8 bytes, or undefined where the thread could not make them. */
  async encode(value: unknown, options: EncodeOptions = {}): Promise<Uint8Array | undefined> {
    // A tenant past its share of the server's CPU waits for it before its answer is encoded, as before its commands are parsed.
    // (No await without a budget: the message is posted at once, in the order encode was called.)
    if (options.budget) await options.budget.admit();
    return new Promise((resolve) => {
      const id = ++this.#nextId;
      let worker: Worker;
      try {
        worker = this.#ensureWorker();
        worker.postMessage({ id, value } satisfies EncodeRequest);
      } catch {
        // A value structured clone refuses (a function, a symbol): the caller's JSON.stringify decides.
        resolve(undefined);
        return;
      }
      this.#pending.set(id, { budget: options.budget, resolve });
      worker.ref();
    });
  }

  /** Ends the thread; messages still being encoded give undefined. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll();
    await worker?.terminate();
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(workerEntry('json-encode.js'), { workerData: { nice: CHOSEN_WORK_THREAD_NICE } });
    // Held only while it has messages to encode (encode refs it): idle, it does not keep the process alive.
    worker.unref();
    worker.on('message', (response: EncodeResponse) => {
      const pending = this.#pending.get(response.id);
      this.#pending.delete(response.id);
      if (this.#pending.size === 0) worker.unref();
      pending?.budget?.charge(response.cpuMs);
      pending?.resolve('bytes' in response ? new Uint8Array(response.bytes) : undefined);
    });
    const gone = (): void => {
      if (worker !== this.#worker) return;
      this.#worker = undefined;
      this.#failAll();
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.#worker = worker;
    return worker;
  }

  #failAll(): void {
    const waiting = [...this.#pending.values()];
    this.#pending.clear();
    for (const pending of waiting) pending.resolve(undefined);
  }
}

let shared: JsonEncodeThread | undefined;

/** The process's encoding thread, started on first use (idle, it does not keep the process alive). */
export function sharedJsonEncodeThread(): JsonEncodeThread {
  shared ??= new JsonEncodeThread();
  return shared;
}
