import type { AgentEvent, AgentOutcome } from '../../agent/events.js';
import type { CompletedToolCall } from '../../scheduler/tool-call.js';
import type { LiveOutput } from '../../tools/tool.js';
import { displayText } from './display-text.js';

/**
 * `toolcell run --output stream-json`: one JSON object per line, each with
 * `type` and an ISO `timestamp`. Field names follow gemini-cli's stream-json
 * (snake_case: session_id, tool_id, tool_name, parameters, …):
 *
 * - `init`        {session_id, model, workspace, approval_mode}
 * - `message`     {role: 'user'|'assistant', content, delta?}: assistant text arrives in deltas
 * - `tool_call`   {tool_id, tool_name, parameters}: announced once the model's answer has ended
 * - `tool_output` {tool_id, output} live output of a running call (the whole current
 *                 text, replacing the previous one), or {tool_id, binary: true, bytes_received}
 * - `tool_result` {tool_id, tool_name, status: 'success'|'error'|'cancelled', output?, error?: {type, message}, duration_ms}
 * - `error`       {severity: 'warning'|'error', code, message}
 * - `result`      {status: 'success'|'error', error?: {type, message}, response,
 *                 stats: {total_tokens, input_tokens, output_tokens, cached, duration_ms, turns, tool_calls}}
 */
export type StreamJsonEvent =
  | { type: 'init'; session_id: string; model: string; workspace: string; approval_mode: string }
  | { type: 'message'; role: 'user' | 'assistant'; content: string; delta?: true }
  | { type: 'tool_call'; tool_id: string; tool_name: string; parameters: Record<string, unknown> }
  | { type: 'tool_output'; tool_id: string; output: string }
  | { type: 'tool_output'; tool_id: string; binary: true; bytes_received: number }
  | {
      type: 'tool_result';
      tool_id: string;
      tool_name: string;
      status: CompletedToolCall['status'];
      output?: string;
      error?: { type: string; message: string };
      duration_ms: number;
    }
  | { type: 'error'; severity: 'warning' | 'error'; code: string; message: string }
  | { type: 'result'; status: 'success' | 'error'; response: string; error?: { type: string; message: string }; stats: ResultStats };

export interface ResultStats {
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  cached: number;
  duration_ms: number;
  turns: number;
  tool_calls: number;
}

type Timestamped = StreamJsonEvent & { timestamp: string };

/** Writes stream-json lines; every method writes at most one line. */
export class StreamJsonWriter {
  readonly #write: (line: string) => void;

  constructor(write: (line: string) => void) {
    this.#write = write;
  }

  emit(event: StreamJsonEvent): void {
    // `type` and `timestamp` lead every line, as in gemini-cli.
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
        return this.emit({ type: 'tool_call', tool_id: event.request.callId, tool_name: event.request.name, parameters: event.request.args });
      case 'tool_result':
        return this.emit(toolResult(event.call));
      case 'warning':
        return this.emit({ type: 'error', severity: 'warning', code: event.code, message: event.message });
      default:
        return;
    }
  }

  toolOutput(callId: string, output: LiveOutput): void {
    if (typeof output === 'string') this.emit({ type: 'tool_output', tool_id: callId, output });
    else this.emit({ type: 'tool_output', tool_id: callId, binary: true, bytes_received: output.bytesReceived });
  }

  /** The closing line (preceded by an `error` line when the run failed). */
  result(outcome: AgentOutcome): void {
    if (outcome.error) this.emit({ type: 'error', severity: 'error', code: outcome.error.code, message: outcome.error.message });
    this.emit({
      type: 'result',
      status: outcome.status === 'completed' ? 'success' : 'error',
      response: outcome.text,
      ...(outcome.error ? { error: { type: outcome.error.code, message: outcome.error.message } } : {}),
      stats: resultStats(outcome),
    });
  }
}

export function toolResult(call: CompletedToolCall): Extract<StreamJsonEvent, { type: 'tool_result' }> {
  const output = displayText(call.response.resultDisplay);
  return {
    type: 'tool_result',
    tool_id: call.request.callId,
    tool_name: call.request.name,
    status: call.status,
    ...(output !== undefined ? { output } : {}),
    ...(call.response.error ? { error: { type: call.response.error.type, message: call.response.error.message } } : {}),
    duration_ms: call.durationMs,
  };
}

export function resultStats(outcome: AgentOutcome): ResultStats {
  return {
    total_tokens: outcome.usage.totalTokens,
    input_tokens: outcome.usage.promptTokens,
    output_tokens: outcome.usage.outputTokens,
    cached: outcome.usage.cachedTokens,
    duration_ms: outcome.durationMs,
    turns: outcome.turns,
    tool_calls: outcome.toolCalls,
  };
}
