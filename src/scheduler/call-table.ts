import type { LiveOutput } from '../tools/tool.js';
import type { CompletedToolCall, ExecutingToolCall, ToolCall, ToolCallUpdate } from './tool-call.js';
import { isCompleted } from './tool-call.js';

/** When a call entered the states that are timed (ms since the epoch). */
interface CallClock {
  waitingSince?: number;
  /** Set once the person was asked, even when the answer took no time. */
  waitedMs?: number;
  executingSince?: number;
}

/**
 * The calls of the current batch, in request order. Every state change goes
 * through `set`, which notifies observers; the table enforces that a final
 * call never changes again (a late result after a cancel is dropped). Since
 * it sees every change, the table also times each call (`CallTiming`):
 * execution from `executing` to the end, and the wait for the person's answer
 * separately, so neither is mistaken for the other.
 */
export class CallTable {
  /** Changed in place; readers get `#snapshot`, copied only when read after a change. */
  #calls: ToolCall[] = [];
  #snapshot: readonly ToolCall[] | undefined;
  readonly #index = new Map<string, number>();
  readonly #clocks = new Map<string, CallClock>();
  readonly #onUpdate: ((calls: readonly ToolCall[]) => void) | undefined;
  readonly #onComplete: (call: CompletedToolCall) => void;

  constructor(options: { onUpdate?: (calls: readonly ToolCall[]) => void; onComplete: (call: CompletedToolCall) => void }) {
    this.#onUpdate = options.onUpdate;
    this.#onComplete = options.onComplete;
  }

  /** Starts a batch. A call that is final from the start (an unknown tool) never ran: its duration is 0. */
  reset(calls: ToolCallUpdate[]): void {
    this.#clocks.clear();
    this.#calls = calls.map((call) => (isCompleted(call as ToolCall) ? ({ ...call, durationMs: 0 } as ToolCall) : (call as ToolCall)));
    this.#snapshot = undefined;
    this.#index.clear();
    this.#calls.forEach((call, i) => this.#index.set(call.request.callId, i));
    for (const call of this.#calls) if (isCompleted(call)) this.#onComplete(call);
    this.#notify();
  }

  /**
   * Every call in request order: an array that never changes (a later state
   * change makes a new one), so observers may keep it. Copied when first read
   * after a change rather than on every change: a batch of n calls makes
   * about 3n changes, and copying on each cost O(n²) (bench/dispatch).
   */
  get all(): readonly ToolCall[] {
    return (this.#snapshot ??= this.#calls.slice());
  }

  get(callId: string): ToolCall {
    const call = this.#calls[this.#index.get(callId)!];
    if (!call) throw new Error(`unknown call ${callId}`);
    return call;
  }

  /** Replaces a call's state. Returns false (and changes nothing) when the call is already final. */
  set(update: ToolCallUpdate): boolean {
    const callId = update.request.callId;
    const i = this.#index.get(callId)!;
    const current = this.#calls[i]!;
    if (isCompleted(current)) return false;
    const next = this.#stamp(current, update);
    this.#calls[i] = next;
    this.#snapshot = undefined;
    if (isCompleted(next)) this.#onComplete(next);
    this.#notify();
    return true;
  }

  setLiveOutput(callId: string, liveOutput: LiveOutput): void {
    const current = this.get(callId);
    if (current.status !== 'executing') return;
    this.set({ ...(current as ExecutingToolCall), liveOutput });
  }

  /** Records the times of a state change; a final state gets its `CallTiming`. */
  #stamp(current: ToolCall, update: ToolCallUpdate): ToolCall {
    const now = Date.now();
    const clock = this.#clocks.get(update.request.callId) ?? {};
    this.#clocks.set(update.request.callId, clock);
    if (current.status === 'awaiting_approval' && update.status !== 'awaiting_approval' && clock.waitingSince !== undefined) {
      clock.waitedMs = (clock.waitedMs ?? 0) + (now - clock.waitingSince);
      delete clock.waitingSince;
    }
    if (update.status === 'awaiting_approval' && current.status !== 'awaiting_approval') clock.waitingSince = now;
    if (update.status === 'executing' && current.status !== 'executing') clock.executingSince = now;
    if (update.status !== 'success' && update.status !== 'error' && update.status !== 'cancelled') return update as ToolCall;
    return {
      ...update,
      durationMs: clock.executingSince !== undefined ? now - clock.executingSince : 0,
      ...(clock.waitedMs !== undefined ? { approvalWaitMs: clock.waitedMs } : {}),
    } as ToolCall;
  }

  #notify(): void {
    if (this.#onUpdate) this.#onUpdate(this.all);
  }
}
