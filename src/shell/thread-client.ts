import { MessageChannel, Worker } from 'node:worker_threads';
import { ToolErrorType, ToolcellError } from '../errors.js';
import { workerEntry } from '../paths.js';
import type { RunEvent, RunRequest, ShellThreadSettings, ThreadReply, ThreadRequest, WireError } from './protocol.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: ToolcellError) => void };

/** A request without its id (the client numbers them). */
type ControlRequest = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * The main thread's end of the shell thread: numbered control requests,
 * one MessageChannel per run, and a worker that only keeps the process
 * alive while something is in flight.
 */
export class ShellThreadClient {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #runs = new Set<(error: ToolcellError) => void>();
  #nextId = 1;
  #busy = 0;
  #dead: ToolcellError | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (message: ThreadReply) => this.#onReply(message));
    worker.on('error', (error) => this.#fail(new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `The shell thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.#fail(new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `The shell thread stopped (exit code ${code}).`)));
    worker.unref();
  }

  /** Starts the thread and resolves once it runs. */
  static start(settings: ShellThreadSettings): Promise<ShellThreadClient> {
    const worker = new Worker(workerEntry('shell.js'), { workerData: settings, name: 'toolcell-shell' });
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void =>
        reject(new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, `The shell thread could not start: ${error.message}`));
      worker.once('error', onError);
      worker.once('online', () => {
        worker.off('error', onError);
        resolve(new ShellThreadClient(worker));
      });
    });
  }

  /** Sends a control request and resolves with its reply's value. */
  request<T>(request: ControlRequest): Promise<T> {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#nextId++;
    this.#hold();
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#worker.postMessage({ ...request, id } as ThreadRequest);
    }).finally(() => this.#release());
  }

  /**
   * Starts a run on its own channel. `onEvent` gets live output; the promise
   * settles with the result. `cancel` asks the thread to end the command.
   */
  run(sessionId: string, request: RunRequest, onEvent: (event: RunEvent) => void): { done: Promise<RunEvent>; cancel: () => void } {
    if (this.#dead) return { done: Promise.reject(this.#dead), cancel: () => {} };
    const { port1, port2 } = new MessageChannel();
    this.#hold();
    let fail: (error: ToolcellError) => void = () => {};
    const done = new Promise<RunEvent>((resolve, reject) => {
      fail = reject;
      this.#runs.add(fail);
      port1.on('message', (event: RunEvent) => {
        if (event.type === 'output') onEvent(event);
        else resolve(event);
      });
    }).finally(() => {
      this.#runs.delete(fail);
      port1.close();
      this.#release();
    });
    this.#worker.postMessage({ type: 'run', sessionId, port: port2, run: request } satisfies ThreadRequest, [port2]);
    return { done, cancel: () => port1.postMessage({ type: 'cancel' }) };
  }

  /** Ends the thread (after a `shutdown` request has closed the sessions). */
  async terminate(): Promise<void> {
    this.#dead ??= new ToolcellError(ToolErrorType.SHELL_EXECUTE_ERROR, 'The shell service is closed.');
    await this.#worker.terminate();
  }

  get closed(): boolean {
    return this.#dead !== undefined;
  }

  #onReply(message: ThreadReply): void {
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    this.#pending.delete(message.id);
    if (message.ok) pending.resolve(message.value);
    else pending.reject(fromWire(message.error));
  }

  #fail(error: ToolcellError): void {
    this.#dead ??= error;
    for (const pending of this.#pending.values()) pending.reject(this.#dead);
    this.#pending.clear();
    for (const fail of this.#runs) fail(this.#dead);
  }

  // The worker keeps the process alive only while a request or run is in flight.
  #hold(): void {
    if (this.#busy++ === 0) this.#worker.ref();
  }

  #release(): void {
    if (--this.#busy === 0) this.#worker.unref();
  }
}

export function fromWire(error: WireError): ToolcellError {
  return new ToolcellError(error.code, error.message);
}
