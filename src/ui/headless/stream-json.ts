import type { ErrorCode, WarningCode } from '../../errors.js';
import type { AgentEvent, AgentOutcome } from '../../agent/events.js';
import type { CompletedToolCall } from '../../scheduler/tool-call.js';
import type { LiveOutput } from '../../tools/tool.js';
import { displayText } from './display-text.js';
import { liveDelta } from './live-delta.js';

/**
 * `toolcell run --output stream-json`: one JSON object per line, each with
 * `type` and an ISO `timestamp` first. The event types and their fields are
 * Gemini CLI's (packages/core/src/output/types.ts there), so a parser written
 * for Gemini CLI reads these lines unchanged:
 *
 * - `init`        {session_id, model}
 * - `message`     {role: 'user'|'assistant', content, delta?}: assistant text arrives in deltas
 * - `tool_use`    {tool_name, tool_id, parameters}: announced once the model's answer has ended
 * - `tool_result` {tool_id, status: 'success'|'error', output?, error?: {type, message}}
 *                 (a cancelled call is an error of type `cancelled`)
 * - `error`       {severity: 'warning'|'error', message}
 * - `result`      {status: 'success'|'error', error?: {type, message},
 *                 stats: {total_tokens, input_tokens, output_tokens, cached, input, duration_ms, tool_calls, models}}
 *
 * toolcell adds, and Gemini CLI parsers ignore:
 * - fields: `init` {workspace, approval_mode}; `tool_result` {tool_name,
 *   duration_ms (execution time)}; `error` {code}; `result` {response};
 *   `stats` {turns};
 * - one event type, `tool_output` {tool_id, output}: the output a running
 *   call added since its previous `tool_output` (see `liveDelta`; a `\r`
 *   starts a line redrawn in place), or {tool_id, binary: true,
 *   bytes_received} for a binary stream.
 */
export type StreamJsonEvent =
  | { type: 'init'; session_id: string; model: string; workspace: string; approval_mode: string }
  | { type: 'message'; role: 'user' | 'assistant'; content: string; delta?: true }
  | { type: 'tool_use'; tool_name: string; tool_id: string; parameters: Record<string, unknown> }
  | { type: 'tool_output'; tool_id: string; output: string }
  | { type: 'tool_output'; tool_id: string; binary: true; bytes_received: number }
  | {
      type: 'tool_result';
      tool_id: string;
      tool_name: string;
      status: 'success' | 'error';
      output?: string;
      error?: { type: string; message: string };
      duration_ms: number;
    }
  | { type: 'error'; severity: 'warning' | 'error'; code: ErrorCode | WarningCode; message: string }
  | { type: 'result'; status: 'success' | 'error'; response: string; error?: { type: string; message: string }; stats: ResultStats };

/** Token counts of one model, as Gemini CLI's `ModelStreamStats`. */
export interface ModelStats {
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  cached: number;
  /** Input tokens not served from the cache. */
  input: number;
}

export interface ResultStats extends ModelStats {
  duration_ms: number;
  tool_calls: number;
  /** Per model; a run uses one. */
  models: Record<string, ModelStats>;
  turns: number;
}

type Timestamped = StreamJsonEvent & { timestamp: string };

/** Writes stream-json lines; every method writes at most one line. */
export class StreamJsonWriter {
  readonly #write: (line: string) => void;
  /** The last live snapshot of each running call, to send only what is new. */
  readonly #shown = new Map<string, string>();

  constructor(write: (line: string) => void) {
    this.#write = write;
  }

  emit(event: StreamJsonEvent): void {
    // `type` and `timestamp` lead every line, as in Gemini CLI.
    const { type, ...fields } = event;
    const line = { type, timestamp: new Date().toISOString(), ...fields } as Timestamped;
    this.#write(`${JSON.stringify(line)}\n`);
  }

  /** Maps one agent event; `turn_started`, `thought`, `usage` and `finished` have no line of their own. */
  agentEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'text':
        return this.emit({ type: 'message', role: 'assistant', content: event.text, delta: true });
      case 'tool_call':
        return this.emit({ type: 'tool_use', tool_name: event.request.name, tool_id: event.request.callId, parameters: event.request.args });
      case 'tool_result': {
        this.#shown.delete(event.call.request.callId);
        const { status, ...rest } = toolResult(event.call);
        return this.emit({ type: 'tool_result', status: status === 'success' ? 'success' : 'error', ...rest });
      }
      case 'warning':
        return this.emit({ type: 'error', severity: 'warning', code: event.code, message: event.message });
      default:
        return;
    }
  }

  /** A `tool_output` line with what the call's new snapshot adds; none when it adds nothing. */
  toolOutput(callId: string, output: LiveOutput): void {
    if (typeof output !== 'string') {
      this.emit({ type: 'tool_output', tool_id: callId, binary: true, bytes_received: output.bytesReceived });
      return;
    }
    const delta = liveDelta(this.#shown.get(callId) ?? '', output);
    this.#shown.set(callId, output);
    if (delta !== '') this.emit({ type: 'tool_output', tool_id: callId, output: delta });
  }

  /** The closing line (preceded by an `error` line when the run failed). */
  result(outcome: AgentOutcome, meta: { model: string }): void {
    if (outcome.error) this.emit({ type: 'error', severity: 'error', code: outcome.error.code, message: outcome.error.message });
    this.emit({
      type: 'result',
      status: outcome.status === 'completed' ? 'success' : 'error',
      response: outcome.text,
      ...(outcome.error ? { error: { type: outcome.error.code, message: outcome.error.message } } : {}),
      stats: resultStats(outcome, meta.model),
    });
  }
}

/** A finished call's fields in toolcell's own terms (`--output json` keeps `cancelled` as a status). */
export function toolResult(call: CompletedToolCall): {
  tool_id: string;
  tool_name: string;
  status: CompletedToolCall['status'];
  output?: string;
  error?: { type: string; message: string };
  duration_ms: number;
} {
  const output = displayText(call.response.resultDisplay);
  return {
    tool_id: call.request.callId,
    tool_name: call.request.name,
    status: call.status,
    ...(output !== undefined ? { output } : {}),
    ...(call.response.error ? { error: { type: call.response.error.type, message: call.response.error.message } } : {}),
    duration_ms: call.durationMs,
  };
}

export function resultStats(outcome: AgentOutcome, model: string): ResultStats {
  const tokens: ModelStats = {
    total_tokens: outcome.usage.totalTokens,
    input_tokens: outcome.usage.promptTokens,
    output_tokens: outcome.usage.outputTokens,
    cached: outcome.usage.cachedTokens,
    input: Math.max(0, outcome.usage.promptTokens - outcome.usage.cachedTokens),
  };
  return {
    ...tokens,
    duration_ms: outcome.durationMs,
    tool_calls: outcome.toolCalls,
    models: { [model]: tokens },
    turns: outcome.turns,
  };
}
