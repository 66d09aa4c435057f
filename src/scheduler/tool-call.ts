import type { Part } from '@google/genai';
import type { CallSandbox } from '../contracts/sandbox-runtime.js';
import type { ToolCallDecision } from '../contracts/tool-call-decision.js';
import type { LiveOutput, Tool, ToolConfirmationDetails, ToolConfirmationOutcome, ToolResultDisplay, ToolResultError } from '../tools/tool.js';

/** One FunctionCall from the model, with a call id. */
export interface ToolCallRequest {
  callId: string;
  name: string;
  args: Record<string, unknown>;
}

/** What goes back to the model for one call, plus what people see. */
export interface ToolCallResponse {
  callId: string;
  /** The FunctionResponse part first, then any media parts (the order Gemini's API expects). */
  responseParts: Part[];
  resultDisplay?: ToolResultDisplay;
  /** Lines of the whole text `resultDisplay` shows only part of (ToolResult.displayLines). */
  displayLines?: number;
  error?: ToolResultError;
  /** Where the call's command ran (ToolResult.sandbox), for telemetry. */
  sandbox?: CallSandbox;
}

export type { ToolCallDecision };

interface CallBase {
  request: ToolCallRequest;
  /** When the call was received (ms since the epoch). */
  startTime: number;
  decision?: ToolCallDecision;
  outcome?: ToolConfirmationOutcome;
}

export interface ValidatingToolCall extends CallBase {
  status: 'validating';
  tool: Tool<unknown>;
}

export interface WaitingToolCall extends CallBase {
  status: 'awaiting_approval';
  tool: Tool<unknown>;
  params: unknown;
  confirmationDetails: ToolConfirmationDetails;
}

export interface ScheduledToolCall extends CallBase {
  status: 'scheduled';
  tool: Tool<unknown>;
  params: unknown;
}

export interface ExecutingToolCall extends CallBase {
  status: 'executing';
  tool: Tool<unknown>;
  params: unknown;
  liveOutput?: LiveOutput;
}

/**
 * How long a finished call took, stamped by the call table on its state
 * changes. The person's answer is not part of the execution: a command that
 * ran 3 s after 6 s of thinking it over took 3 s.
 */
export interface CallTiming {
  /** Execution time: from `executing` to the end; 0 for a call that never ran (denied, or cancelled before it started). */
  durationMs: number;
  /** Time spent waiting for the person's answer (including edits in their editor); present only when they were asked. */
  approvalWaitMs?: number;
}

export interface SuccessfulToolCall extends CallBase, CallTiming {
  status: 'success';
  tool: Tool<unknown>;
  response: ToolCallResponse;
}

export interface ErroredToolCall extends CallBase, CallTiming {
  status: 'error';
  /** Absent when the tool was not registered. */
  tool?: Tool<unknown>;
  response: ToolCallResponse & { error: ToolResultError };
}

export interface CancelledToolCall extends CallBase, CallTiming {
  status: 'cancelled';
  tool: Tool<unknown>;
  response: ToolCallResponse;
}

/** A call's state machine as a discriminated union on `status`, as Gemini CLI's scheduler keeps it. */
export type ToolCall = ValidatingToolCall | WaitingToolCall | ScheduledToolCall | ExecutingToolCall | SuccessfulToolCall | ErroredToolCall | CancelledToolCall;

export type CompletedToolCall = SuccessfulToolCall | ErroredToolCall | CancelledToolCall;

/** A state change as the scheduler writes it: the call table adds the timing. */
export type ToolCallUpdate = ToolCall extends infer C ? (C extends ToolCall ? Omit<C, keyof CallTiming> : never) : never;

export type ToolCallStatus = ToolCall['status'];

export function isCompleted(call: ToolCall): call is CompletedToolCall {
  return call.status === 'success' || call.status === 'error' || call.status === 'cancelled';
}
