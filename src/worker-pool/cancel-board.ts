/**
 * A shared-memory board through which the main thread cancels calls running
 * in workers, and workers report when a call leaves the queue. One Int32 slot
 * per call in flight (its state) plus its start time. It replaces a
 * MessagePort per call, whose transfer alone doubled dispatch latency; calls
 * that stream output still get a port for that.
 *
 * Slot states: QUEUED → STARTED → DONE, or CANCELLED from QUEUED/STARTED.
 * Workers poll their running slots (see SlotWatcher). While a call runs, its
 * slot also names the worker thread running it, so that the pool can end
 * that thread, and only that one, when the call will not stop.
 */
export const SlotState = { QUEUED: 0, STARTED: 1, CANCELLED: 2, DONE: 3 } as const;

/** The shared memory, as sent to workers in workerData. */
export interface CancelBoardMemory {
  states: SharedArrayBuffer;
  startTimes: SharedArrayBuffer;
  /** threadId of the worker running the call; 0 before it starts and after it ends. */
  owners: SharedArrayBuffer;
  /** Date.now() when the board was made; start times are stored relative to it (Int32 ms). */
  epoch: number;
}

/** Start time of a call no worker has started (a real one is ≥ 0: ms since the board's epoch). */
const NOT_STARTED = -1;

export class CancelBoard {
  readonly memory: CancelBoardMemory;
  readonly #states: Int32Array;
  readonly #startTimes: Int32Array;
  readonly #owners: Int32Array;
  readonly #free: number[];

  constructor(options: { slots: number }) {
    this.memory = {
      states: new SharedArrayBuffer(options.slots * 4),
      startTimes: new SharedArrayBuffer(options.slots * 4),
      owners: new SharedArrayBuffer(options.slots * 4),
      epoch: Date.now(),
    };
    this.#states = new Int32Array(this.memory.states);
    this.#startTimes = new Int32Array(this.memory.startTimes);
    this.#owners = new Int32Array(this.memory.owners);
    this.#free = Array.from({ length: options.slots }, (_, i) => options.slots - 1 - i);
  }

  /** A slot for a new call, or undefined when every slot is in use. */
  acquire(): number | undefined {
    const slot = this.#free.pop();
    if (slot !== undefined) {
      Atomics.store(this.#owners, slot, 0);
      Atomics.store(this.#startTimes, slot, NOT_STARTED);
      Atomics.store(this.#states, slot, SlotState.QUEUED);
    }
    return slot;
  }

  release(slot: number): void {
    this.#free.push(slot);
  }

  /** Asks the call in `slot` to stop; a no-op once it is done. */
  cancel(slot: number): void {
    for (;;) {
      const state = Atomics.load(this.#states, slot);
      if (state === SlotState.DONE || state === SlotState.CANCELLED) return;
      if (Atomics.compareExchange(this.#states, slot, state, SlotState.CANCELLED) === state) break;
    }
  }

  /** threadId of the worker running the call in `slot`, or 0 when it has not started or has ended. */
  runningOn(slot: number): number {
    return Atomics.load(this.#owners, slot);
  }

  /** True while no worker has started the call (also when it was cancelled first). */
  neverStarted(slot: number): boolean {
    const state = Atomics.load(this.#states, slot);
    return state === SlotState.QUEUED || (state === SlotState.CANCELLED && Atomics.load(this.#startTimes, slot) === NOT_STARTED);
  }

  /**
   * Makes a call that ran to its end queued again, for a second run; false
   * (and nothing changes) when it had not ended. For a read-only call whose
   * result was lost with its worker (see TaskBatcher).
   */
  requeueFinished(slot: number): boolean {
    if (Atomics.compareExchange(this.#states, slot, SlotState.DONE, SlotState.QUEUED) !== SlotState.DONE) return false;
    Atomics.store(this.#owners, slot, 0);
    Atomics.store(this.#startTimes, slot, NOT_STARTED);
    return true;
  }

  /** Milliseconds the call has been executing, or undefined while it is still queued. */
  executingFor(slot: number): number | undefined {
    const started = Atomics.load(this.#startTimes, slot);
    if (started === NOT_STARTED || Atomics.load(this.#states, slot) === SlotState.QUEUED) return undefined;
    return Date.now() - this.memory.epoch - started;
  }
}

/**
 * The worker's side of the board: marks calls started and aborts their
 * controllers when the main thread cancels them. One poll every few
 * milliseconds for all running calls of this worker costs less than any
 * per-call wake-up mechanism (a MessagePort, or Atomics.waitAsync's promise).
 */
export class SlotWatcher {
  readonly #memory: CancelBoardMemory;
  readonly #states: Int32Array;
  readonly #startTimes: Int32Array;
  readonly #owners: Int32Array;
  readonly #threadId: number;
  readonly #running = new Map<number, { abort(): void }>();

  constructor(memory: CancelBoardMemory, options: { pollMs: number; threadId: number }) {
    this.#memory = memory;
    this.#states = new Int32Array(memory.states);
    this.#startTimes = new Int32Array(memory.startTimes);
    this.#owners = new Int32Array(memory.owners);
    this.#threadId = options.threadId;
    setInterval(() => this.#poll(), options.pollMs).unref();
  }

  /**
   * Marks the call in `slot` started; `controller` is aborted if it gets
   * cancelled. Returns false, and starts nothing, when it was cancelled
   * before it started: the caller must not run it.
   */
  start(slot: number, controller: { abort(): void }): boolean {
    Atomics.store(this.#startTimes, slot, Date.now() - this.#memory.epoch);
    Atomics.store(this.#owners, slot, this.#threadId);
    if (Atomics.compareExchange(this.#states, slot, SlotState.QUEUED, SlotState.STARTED) !== SlotState.QUEUED) {
      Atomics.store(this.#owners, slot, 0);
      controller.abort();
      return false;
    }
    this.#running.set(slot, controller);
    return true;
  }

  finish(slot: number): void {
    this.#running.delete(slot);
    Atomics.store(this.#owners, slot, 0);
    Atomics.compareExchange(this.#states, slot, SlotState.STARTED, SlotState.DONE);
  }

  #poll(): void {
    for (const [slot, controller] of this.#running) {
      if (Atomics.load(this.#states, slot) === SlotState.CANCELLED) {
        this.#running.delete(slot);
        controller.abort();
      }
    }
  }
}
