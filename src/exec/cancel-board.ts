/**
 * A shared-memory board through which the main thread cancels calls running
 * in workers, and workers report when a call leaves the queue. One Int32 slot
 * per call in flight (its state) plus its start time. It replaces a
 * MessagePort per call, whose transfer alone doubled dispatch latency; calls
 * that stream output still get a port for that.
 *
 * Slot states: QUEUED → STARTED → DONE, or CANCELLED from QUEUED/STARTED.
 * Workers poll their running slots (see SlotWatcher).
 */
export const SlotState = { QUEUED: 0, STARTED: 1, CANCELLED: 2, DONE: 3 } as const;

/** The shared memory, as sent to workers in workerData. */
export interface CancelBoardMemory {
  states: SharedArrayBuffer;
  startTimes: SharedArrayBuffer;
  /** Date.now() when the board was made; start times are stored relative to it (Int32 ms). */
  epoch: number;
}

export class CancelBoard {
  readonly memory: CancelBoardMemory;
  readonly #states: Int32Array;
  readonly #startTimes: Int32Array;
  readonly #free: number[];

  constructor(options: { slots: number }) {
    this.memory = {
      states: new SharedArrayBuffer(options.slots * 4),
      startTimes: new SharedArrayBuffer(options.slots * 4),
      epoch: Date.now(),
    };
    this.#states = new Int32Array(this.memory.states);
    this.#startTimes = new Int32Array(this.memory.startTimes);
    this.#free = Array.from({ length: options.slots }, (_, i) => options.slots - 1 - i);
  }

  /** A slot for a new call, or undefined when every slot is in use. */
  acquire(): number | undefined {
    const slot = this.#free.pop();
    if (slot !== undefined) Atomics.store(this.#states, slot, SlotState.QUEUED);
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

  /** Milliseconds the call has been executing, or undefined while it is still queued. */
  executingFor(slot: number): number | undefined {
    if (Atomics.load(this.#states, slot) === SlotState.QUEUED) return undefined;
    return Date.now() - this.memory.epoch - Atomics.load(this.#startTimes, slot);
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
  readonly #running = new Map<number, AbortController>();

  constructor(memory: CancelBoardMemory, options: { pollMs: number }) {
    this.#memory = memory;
    this.#states = new Int32Array(memory.states);
    this.#startTimes = new Int32Array(memory.startTimes);
    setInterval(() => this.#poll(), options.pollMs).unref();
  }

  /** Marks the call in `slot` started; `controller` is aborted if it is (or gets) cancelled. */
  start(slot: number, controller: AbortController): void {
    Atomics.store(this.#startTimes, slot, Date.now() - this.#memory.epoch);
    if (Atomics.compareExchange(this.#states, slot, SlotState.QUEUED, SlotState.STARTED) !== SlotState.QUEUED) controller.abort();
    else this.#running.set(slot, controller);
  }

  finish(slot: number): void {
    this.#running.delete(slot);
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
