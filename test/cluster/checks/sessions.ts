/**
 * A tenant's MCP session through the fronts, for the checks against the
 * real server (probes/mcp-script.ts, run in the hub as a client would be).
 */
import { hubProbe, type ClusterContext } from '../context.js';
import { fronts } from './front.js';

export interface Step {
  tool: string;
  args: Record<string, unknown>;
  timeoutMs?: number;
}

export interface ScriptOutcome {
  session?: string;
  results: { ok: boolean; text?: string; error?: string; startedAt: number; endedAt: number }[];
  /** The session could not be opened (the SDK's message, with the HTTP status). */
  error?: string;
  /** initializeOnly: the answer to one raw initialize. */
  status?: number;
  retryAfter?: string;
  body?: string;
}

export interface Script {
  key: string;
  /** Default every node's front. */
  fronts?: string[];
  session?: string;
  steps?: Step[];
  keep?: boolean;
  initializeOnly?: boolean;
}

export function runScript(context: ClusterContext, script: Script, timeoutMs = 300_000): Promise<ScriptOutcome> {
  const full = { ...script, ca: context.frontCa, fronts: script.fronts ?? fronts(context).split(',') };
  return hubProbe<ScriptOutcome>('mcp-script', [JSON.stringify(full)], timeoutMs);
}

export const shell = (command: string, timeoutMs?: number): Step => ({ tool: 'run_shell_command', args: { command }, ...(timeoutMs ? { timeoutMs } : {}) });
export const writeStep = (file: string, content: string): Step => ({ tool: 'write_file', args: { file_path: file, content } });
export const readStep = (file: string): Step => ({ tool: 'read_file', args: { file_path: file } });

/** Every step ran and answered without error. */
export function succeeded(outcome: ScriptOutcome, steps: number): boolean {
  return outcome.error === undefined && outcome.results.length === steps && outcome.results.every((result) => result.ok);
}

/** A body that names a host, an address, a node or a piece of the stack (a 503 must name none). */
export const NAMES_A_HOST = /10\.21\d|tcsw|\bn\d\b|etcd|haproxy|toolcell-server|https?:\/\//i;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
