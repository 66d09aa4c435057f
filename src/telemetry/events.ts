import type { CallSandbox } from '../contracts/sandbox-runtime.js';
import type { ToolCallDecision } from '../contracts/tool-call-decision.js';

/** One finished tool call, as recorded by telemetry sinks. Plain JSON. */
export interface ToolCallEvent {
  event: 'tool_call';
  timestamp: string;
  callId: string;
  tool: string;
  /** Execution time: from the start of the call's execution to its end; 0 for a call that never ran. */
  durationMs: number;
  /** Time spent waiting for the person's answer, when they were asked; never part of `durationMs`. */
  approvalWaitMs?: number;
  /** How the call came to run: auto (no confirmation needed), accept, accept_always, modify, reject, denied. */
  decision: ToolCallDecision;
  outcome: 'success' | 'error' | 'cancelled';
  errorType?: string;
  /** Where the call's command ran (run_shell_command): `{backend: "docker", runtime: "runsc"}`. */
  sandbox?: CallSandbox;
}

/** Receives every finished call. Must not throw; slow sinks should buffer. */
export interface TelemetrySink {
  record(event: ToolCallEvent): void;
  /** Flushes and releases resources. */
  close?(): Promise<void>;
}

/** Sends every event to several sinks. */
export function combineSinks(...sinks: TelemetrySink[]): TelemetrySink {
  return {
    record(event) {
      for (const sink of sinks) sink.record(event);
    },
    async close() {
      await Promise.all(sinks.map(async (sink) => sink.close?.()));
    },
  };
}
