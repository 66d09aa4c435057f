import { Agent } from '../agent/agent.js';
import { createGeminiClient } from '../agent/gemini-client.js';
import { systemInstruction } from '../agent/system-instruction.js';
import { webFetchSummarizer } from '../agent/web-fetch-summary.js';
import { createRuntime, type Runtime, type SandboxMode } from '../runtime/runtime.js';
import { runtimeOptionsFrom } from './options.js';
import type { ApprovalMode } from '../scheduler/approval.js';
import type { Scheduler, SchedulerOptions } from '../scheduler/scheduler.js';
import { JsonlFileSink } from '../telemetry/jsonl-sink.js';

export interface AgentSetupOptions {
  workspace: string;
  approval: ApprovalMode;
  /** As named by `--sandbox`; absent, settings decide (see createRuntime). */
  sandbox?: SandboxMode;
  timeout?: number;
  settings?: string;
  trustWorkspace?: boolean;
  /** `--policy` files. */
  policy?: string[];
  model: string;
  maxTurns: number;
  telemetryFile?: string;
  /** Whether a person can answer confirmations (shapes the system instruction). */
  interactive: boolean;
  /** confirm / editor / onUpdate / onOutput for the scheduler. */
  scheduler?: Partial<Omit<SchedulerOptions, 'registry' | 'approvalMode' | 'telemetry'>>;
  onWarning?: (message: string) => void;
}

/** An agent wired to the real Gemini client, a runtime's registry and a scheduler over it. */
export interface AgentSetup {
  agent: Agent;
  runtime: Runtime;
  scheduler: Scheduler;
  close(): Promise<void>;
}

/**
 * Builds what `run` and `chat` share: the Gemini client (throws
 * `api_key_missing` / `invalid_base_url` first, before anything starts), the
 * runtime (`invalid_workspace`, …, and telemetry: the OpenTelemetry API
 * always, JSONL when asked) and the agent.
 */
export async function setUpAgent(options: AgentSetupOptions): Promise<AgentSetup> {
  const client = createGeminiClient();
  const runtime = await createRuntime({
    ...runtimeOptionsFrom(options),
    // The runtime reports to the OpenTelemetry API itself.
    ...(options.telemetryFile ? { telemetry: new JsonlFileSink({ path: options.telemetryFile }) } : {}),
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    webFetchSummarizer: webFetchSummarizer({ client: client.models, model: options.model }),
  });
  // Only a person can mean "allow always"; their answer becomes a rule in their policy folder.
  const scheduler = runtime.createScheduler({ ...(options.interactive ? { alwaysAllow: runtime.alwaysAllow } : {}), ...options.scheduler });
  const agent = new Agent({
    client: client.models,
    model: options.model,
    scheduler,
    registry: runtime.registry,
    maxTurns: options.maxTurns,
    systemInstruction: systemInstruction({ workspace: runtime.workspace.roots[0]!, approvalMode: options.approval, interactive: options.interactive }),
  });
  return {
    agent,
    runtime,
    scheduler,
    async close() {
      await runtime.close();
    },
  };
}
