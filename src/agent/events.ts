import type { ErrorCode, WarningCode } from '../errors.js';
import type { CompletedToolCall, ToolCallRequest } from '../scheduler/tool-call.js';

/** Token counts, summed over the model requests of one `Agent.send`. */
export interface TokenUsage {
  promptTokens: number;
  outputTokens: number;
  cachedTokens: number;
  totalTokens: number;
}

/** An error the agent reports instead of throwing: a stable snake_case code and one line for people. */
export interface AgentError {
  code: ErrorCode;
  message: string;
}

/** How one `Agent.send` ended. */
export type AgentStatus = 'completed' | 'max_turns' | 'cancelled' | 'error';

/** The summary of one `Agent.send`: also its generator's return value and its last event. */
export interface AgentOutcome {
  status: AgentStatus;
  /** Every text part the model streamed during this send, concatenated. */
  text: string;
  /** Model requests made (including a failed one). */
  turns: number;
  /** Tool calls the model asked for (each counted once, whatever became of it). */
  toolCalls: number;
  usage: TokenUsage;
  durationMs: number;
  /** Set when status is `error` (an API failure) or `max_turns`/`cancelled` (why it stopped). */
  error?: AgentError;
}

/**
 * What the turn loop reports, in order. Text arrives as it streams; a turn's
 * tool calls are announced together once its stream has ended, right before
 * they are scheduled, and their results once the whole batch is done.
 */
export type AgentEvent =
  | { type: 'turn_started'; turn: number }
  | { type: 'text'; text: string }
  | { type: 'thought'; text: string }
  | { type: 'tool_call'; request: ToolCallRequest }
  | { type: 'tool_result'; call: CompletedToolCall }
  | { type: 'usage'; turn: number; usage: TokenUsage }
  /** Something worth telling people that did not stop the loop (e.g. the answer hit MAX_TOKENS). */
  | { type: 'warning'; code: WarningCode; message: string }
  | { type: 'finished'; outcome: AgentOutcome };

export function emptyUsage(): TokenUsage {
  return { promptTokens: 0, outputTokens: 0, cachedTokens: 0, totalTokens: 0 };
}

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}
