import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Agent, type AgentOptions } from '../../src/agent/agent.js';
import type { AgentEvent, AgentOutcome } from '../../src/agent/events.js';
import { createGeminiClient } from '../../src/agent/gemini-client.js';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import { Scheduler, type SchedulerOptions } from '../../src/scheduler/scheduler.js';
import { defineTool, type WorkspaceInfo } from '../../src/tools/define-tool.js';
import { createLocalTool } from '../../src/tools/defined-tool.js';
import type { FakeGemini } from '../helpers/fake-gemini.js';

/** What the test tools saw, so tests can tell when and how they ran. */
export interface ToolLog {
  runs: Array<{ name: string; params: unknown }>;
  /** Resolved by `wait` when it starts, so a test can abort mid-execution. */
  waitStarted: Promise<void>;
  waitAborted: boolean;
}

export function workspace(): WorkspaceInfo {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolcell-agent-')));
  return { roots: [root], stateDir: join(root, '.toolcell') };
}

/**
 * A registry of small in-process tools: `echo` (read), `wait` (read; runs
 * until aborted) and `needs_ok` (edit; always asks for confirmation).
 */
export function testRegistry(log: ToolLog, ws = workspace()): ToolRegistry {
  let started!: () => void;
  log.waitStarted = new Promise((resolve) => (started = resolve));
  const registry = new ToolRegistry();
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes text back.',
    kind: 'read',
    parameters: z.object({ text: z.string() }),
    describe: ({ text }) => `echo ${text}`,
    async execute(params) {
      log.runs.push({ name: 'echo', params });
      return { llmContent: `echo:${params.text}`, returnDisplay: params.text };
    },
  });
  const wait = defineTool({
    name: 'wait',
    description: 'Waits until cancelled.',
    kind: 'read',
    parameters: z.object({}),
    async execute(params, ctx) {
      log.runs.push({ name: 'wait', params });
      started();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      log.waitAborted = true;
      return { llmContent: 'stopped', returnDisplay: 'stopped' };
    },
  });
  const needsOk = defineTool({
    name: 'needs_ok',
    description: 'Pretends to edit a file; always asks first.',
    kind: 'edit',
    parameters: z.object({}),
    async confirm() {
      return {
        type: 'edit',
        title: 'Confirm edit',
        fileName: 'a.txt',
        filePath: join(ws.roots[0]!, 'a.txt'),
        fileDiff: '',
        originalContent: '',
        newContent: 'x',
      };
    },
    async execute(params) {
      log.runs.push({ name: 'needs_ok', params });
      return { llmContent: 'edited', returnDisplay: 'edited' };
    },
  });
  for (const definition of [echo, wait, needsOk]) registry.register(createLocalTool(definition, { workspace: ws }));
  return registry;
}

export function newLog(): ToolLog {
  return { runs: [], waitStarted: Promise.resolve(), waitAborted: false };
}

/** An Agent on the real @google/genai client (pointed at `fake`), the real Scheduler and test tools. */
export function testAgent(
  fake: FakeGemini,
  options: { maxTurns?: number; scheduler?: Partial<SchedulerOptions>; agent?: Partial<AgentOptions> } = {},
): { agent: Agent; log: ToolLog; scheduler: Scheduler } {
  const log = newLog();
  const registry = testRegistry(log);
  const scheduler = new Scheduler({ registry, ...options.scheduler });
  const client = createGeminiClient({ apiKey: 'test-key', baseUrl: fake.url });
  const agent = new Agent({
    client: client.models,
    model: 'gemini-test',
    scheduler,
    registry,
    ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}),
    ...options.agent,
  });
  return { agent, log, scheduler };
}

/** Runs one send to the end; returns every event and the outcome. */
export async function collect(
  generator: AsyncGenerator<AgentEvent, AgentOutcome>,
  onEvent?: (event: AgentEvent) => void,
): Promise<{ events: AgentEvent[]; outcome: AgentOutcome }> {
  const events: AgentEvent[] = [];
  for (;;) {
    const step = await generator.next();
    if (step.done) return { events, outcome: step.value };
    events.push(step.value);
    onEvent?.(step.value);
  }
}
