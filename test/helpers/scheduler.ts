import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { z } from 'zod';
import { ToolRegistry } from '../../src/registry/tool-registry.js';
import { Scheduler, type SchedulerOptions } from '../../src/scheduler/scheduler.js';
import { defineTool, type WorkspaceInfo } from '../../src/tools/define-tool.js';
import { createLocalTool } from '../../src/tools/defined-tool.js';
import type { ToolCallRequest } from '../../src/scheduler/tool-call.js';

/** A temp workspace removed after the test. */
export function tempWorkspace(t: ExecutionContext): WorkspaceInfo {
  const root = mkdtempSync(join(tmpdir(), 'toolcell-sched-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  return { roots: [root], stateDir: join(root, '.toolcell') };
}

/** Records what ran and how many ran at once. */
export class Recorder {
  running = 0;
  maxRunning = 0;
  readonly events: string[] = [];
  enter(label: string): void {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    this.events.push(`start ${label}`);
  }
  leave(label: string): void {
    this.running--;
    this.events.push(`end ${label}`);
  }
}

/** In-memory "files" edited by the fake_edit tool, so tests can see applied edits. */
export type Files = Map<string, string>;

/**
 * A registry of small local tools with the behaviours scheduler tests need:
 * a read-only waiter, an edit tool that asks with a diff and is modifiable, an exec-style tool.
 */
export function testRegistry(workspace: WorkspaceInfo, recorder: Recorder, files: Files): ToolRegistry {
  const wait = defineTool({
    name: 'wait',
    description: 'Waits a few event-loop turns, or until cancelled.',
    kind: 'read',
    canUpdateOutput: true,
    parameters: z.object({ label: z.string(), turns: z.number().int().default(5) }),
    async execute({ label, turns }, { signal, updateOutput }) {
      recorder.enter(label);
      try {
        for (let i = 0; i < turns && !signal.aborted; i++) {
          updateOutput(`${label} ${i}`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return { llmContent: signal.aborted ? `${label} partial` : `${label} done`, returnDisplay: label };
      } finally {
        recorder.leave(label);
      }
    },
  });
  const fakeEdit = defineTool({
    name: 'fake_edit',
    description: 'Sets the content of an in-memory file.',
    kind: 'edit',
    parameters: z.object({ file: z.string(), content: z.string(), turns: z.number().int().default(3) }),
    locations: ({ file }) => [{ path: join(workspace.roots[0]!, file) }],
    async confirm({ file, content }) {
      const original = files.get(file) ?? null;
      return {
        type: 'edit',
        title: `Edit ${file}`,
        fileName: file,
        filePath: file,
        fileDiff: `-${original ?? ''}\n+${content}`,
        originalContent: original,
        newContent: content,
      };
    },
    async execute({ file, content, turns }) {
      recorder.enter(`${file}:${content}`);
      for (let i = 0; i < turns; i++) await new Promise((resolve) => setTimeout(resolve, 2));
      files.set(file, content);
      recorder.leave(`${file}:${content}`);
      return { llmContent: `wrote ${file}`, returnDisplay: `wrote ${file}` };
    },
    modifiable: { createUpdatedParams: ({ modifiedContent, params }) => ({ ...params, content: modifiedContent }) },
  });
  const fakeExec = defineTool({
    name: 'fake_exec',
    description: 'Pretends to run a command.',
    kind: 'execute',
    parameters: z.object({ command: z.string() }),
    async confirm({ command }) {
      return { type: 'exec', title: 'Run command', command, rootCommand: command.split(' ')[0]!, directory: '.', sandbox: 'none' };
    },
    async execute({ command }) {
      return { llmContent: `ran ${command}`, returnDisplay: command };
    },
  });
  const big = defineTool({
    name: 'big',
    description: 'Returns a long output.',
    kind: 'read',
    parameters: z.object({ chars: z.number().int() }),
    async execute({ chars }) {
      const text = Array.from({ length: chars }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
      return { llmContent: `START${text}END`, returnDisplay: 'big' };
    },
  });
  const registry = new ToolRegistry({ onWarning: () => {} });
  for (const definition of [wait, fakeEdit, fakeExec, big]) registry.register(createLocalTool(definition, { workspace }));
  return registry;
}

/** A scheduler over the test registry. */
export function testScheduler(t: ExecutionContext, options: Partial<SchedulerOptions> = {}) {
  const workspace = tempWorkspace(t);
  const recorder = new Recorder();
  const files: Files = new Map();
  const registry = testRegistry(workspace, recorder, files);
  const scheduler = new Scheduler({ registry, ...options });
  return { scheduler, recorder, files, workspace, registry };
}

let counter = 0;
/** A request with a fresh call id. */
export function call(name: string, args: Record<string, unknown> = {}): ToolCallRequest {
  return { callId: `${name}-${++counter}`, name, args };
}

/**
 * Registers a stand-in `run_shell_command` that asks like the real one (an
 * exec confirmation naming the command) and records what it would run,
 * for tests of the scheduler's policy gate rather than of the shell.
 */
export function registerRecordingShell(registry: ToolRegistry, workspace: WorkspaceInfo): string[] {
  const ran: string[] = [];
  registry.register(
    createLocalTool(
      defineTool({
        name: 'run_shell_command',
        description: 'Records the command.',
        kind: 'execute',
        parameters: z.object({ command: z.string() }),
        async confirm({ command }) {
          return { type: 'exec', title: 'Run', command, rootCommand: command.split(' ')[0]!, directory: '.', sandbox: 'none' };
        },
        async execute({ command }) {
          ran.push(command);
          return { llmContent: `ran ${command}`, returnDisplay: command };
        },
      }),
      { workspace },
    ),
  );
  return ran;
}
