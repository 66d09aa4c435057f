import type { WarningCode } from '../../errors.js';
import type { AgentEvent, AgentOutcome } from '../../agent/events.js';
import { type ResultStats, resultStats, toolResult } from './stream-json.js';

/** One call in `toolcell run --output json`. */
export interface JsonToolCall {
  tool_id: string;
  tool_name: string;
  parameters: Record<string, unknown>;
  status?: 'success' | 'error' | 'cancelled';
  output?: string;
  error?: { type: string; message: string };
  duration_ms?: number;
}

/** The single object `toolcell run --output json` prints when the run ends. */
export interface JsonRunResult {
  session_id: string;
  model: string;
  status: 'success' | 'error';
  response: string;
  tool_calls: JsonToolCall[];
  stats: ResultStats;
  warnings: Array<{ code: WarningCode; message: string }>;
  error?: { type: string; message: string };
}

/** Gathers agent events into the one JSON object of `--output json`. */
export class JsonResultCollector {
  readonly #calls: JsonToolCall[] = [];
  readonly #warnings: Array<{ code: WarningCode; message: string }> = [];

  agentEvent(event: AgentEvent): void {
    if (event.type === 'tool_call') {
      this.#calls.push({ tool_id: event.request.callId, tool_name: event.request.name, parameters: event.request.args });
    } else if (event.type === 'tool_result') {
      const entry = this.#calls.find((call) => call.tool_id === event.call.request.callId);
      const { tool_id: _id, tool_name: _name, ...rest } = toolResult(event.call);
      if (entry) Object.assign(entry, rest);
    } else if (event.type === 'warning') {
      this.#warnings.push({ code: event.code, message: event.message });
    }
  }

  result(outcome: AgentOutcome, meta: { sessionId: string; model: string }): JsonRunResult {
    return {
      session_id: meta.sessionId,
      model: meta.model,
      status: outcome.status === 'completed' ? 'success' : 'error',
      response: outcome.text,
      tool_calls: this.#calls,
      stats: resultStats(outcome, meta.model),
      warnings: this.#warnings,
      ...(outcome.error ? { error: { type: outcome.error.code, message: outcome.error.message } } : {}),
    };
  }
}
