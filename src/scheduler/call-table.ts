import type { LiveOutput } from '../tools/tool.js';
import type { CompletedToolCall, ExecutingToolCall, ToolCall } from './tool-call.js';
import { isCompleted } from './tool-call.js';

/**
 * The calls of the current batch, in request order. Every state change goes
 * through `set`, which notifies observers; the table enforces that a final
 * call never changes again (a late result after a cancel is dropped).
 */
export class CallTable {
  #calls: ToolCall[] = [];
  readonly #index = new Map<string, number>();
  readonly #onUpdate: ((calls: readonly ToolCall[]) => void) | undefined;
  readonly #onComplete: (call: CompletedToolCall) => void;

  constructor(options: { onUpdate?: (calls: readonly ToolCall[]) => void; onComplete: (call: CompletedToolCall) => void }) {
    this.#onUpdate = options.onUpdate;
    this.#onComplete = options.onComplete;
  }

  reset(calls: ToolCall[]): void {
    this.#calls = calls;
    this.#index.clear();
    calls.forEach((call, i) => this.#index.set(call.request.callId, i));
    for (const call of calls) if (isCompleted(call)) this.#onComplete(call);
    this.#notify();
  }

  get all(): readonly ToolCall[] {
    return this.#calls;
  }

  get(callId: string): ToolCall {
    const call = this.#calls[this.#index.get(callId)!];
    if (!call) throw new Error(`unknown call ${callId}`);
    return call;
  }

  /** Replaces a call's state. Returns false (and changes nothing) when the call is already final. */
  set(next: ToolCall): boolean {
    const i = this.#index.get(next.request.callId)!;
    const current = this.#calls[i]!;
    if (isCompleted(current)) return false;
    this.#calls = this.#calls.slice();
    this.#calls[i] = next;
    if (isCompleted(next)) this.#onComplete(next);
    this.#notify();
    return true;
  }

  setLiveOutput(callId: string, liveOutput: LiveOutput): void {
    const current = this.get(callId);
    if (current.status !== 'executing') return;
    this.set({ ...(current as ExecutingToolCall), liveOutput });
  }

  #notify(): void {
    this.#onUpdate?.(this.#calls);
  }
}
