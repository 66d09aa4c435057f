import type { Part } from '@google/genai';
import type {
  LiveOutput,
  Tool,
  ToolConfirmationDetails,
  ToolConfirmationOutcome,
  ToolResultDisplay,
  ToolResultError,
} from '../tools/tool.js';

/** One FunctionCall from the model, with a call id. */
export interface ToolCallRequest {
  callId: string;
  name: string;
  args: Record<string, unknown>;
}

/** What goes back to the model for one call, plus what people see. */
export interface ToolCallResponse {
  callId: string;
  /** The FunctionResponse part first, then any media parts (seed ch. 14). */
  responseParts: Part[];
  resultDisplay?: ToolResultDisplay;
  /** Lines of the whole text `resultDisplay` shows only part of (ToolResult.displayLines). */
  displayLines?: number;
  error?: ToolResultError;
}

/** How the call came to run (or not): recorded in telemetry. */
export type ToolCallDecision = 'auto' | 'accept' | 'accept_always' | 'modify' | 'reject' | 'denied';

interface CallBase {
  request: ToolCallRequest;
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

export interface SuccessfulToolCall extends CallBase {
  status: 'success';
  tool: Tool<unknown>;
  response: ToolCallResponse;
  durationMs: number;
}

export interface ErroredToolCall extends CallBase {
  status: 'error';
  /** Absent when the tool was not registered. */
  tool?: Tool<unknown>;
  response: ToolCallResponse & { error: ToolResultError };
  durationMs: number;
}

export interface CancelledToolCall extends CallBase {
  status: 'cancelled';
  tool: Tool<unknown>;
  response: ToolCallResponse;
  durationMs: number;
}

/** A call's state machine as a discriminated union on `status` (seed ch. 14). */
export type ToolCall =
  | ValidatingToolCall
  | WaitingToolCall
  | ScheduledToolCall
  | ExecutingToolCall
  | SuccessfulToolCall
  | ErroredToolCall
  | CancelledToolCall;

export type CompletedToolCall = SuccessfulToolCall | ErroredToolCall | CancelledToolCall;

export type ToolCallStatus = ToolCall['status'];

export function isCompleted(call: ToolCall): call is CompletedToolCall {
  return call.status === 'success' || call.status === 'error' || call.status === 'cancelled';
}
