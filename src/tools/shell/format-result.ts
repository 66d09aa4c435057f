import { ToolErrorType } from '../../errors.js';
import type { SavedOutputWithExcerpt } from '../../shell/output/output-saver.js';
import type { ShellRunResult } from '../../shell/run-types.js';
import type { SavedOutput, ToolResult } from '../tool.js';

/** What the result text needs besides the run's result. */
export interface ShellCallFacts {
  command: string;
  /** The directory as given (relative to the workspace root), or '' for the root. */
  directory: string;
  background: boolean;
  /** The limits that were in force, to explain a timeout. */
  inactivityMs: number;
  wallMs?: number;
}

/**
 * The ToolResult of a finished shell call, in Gemini CLI's shape: the model
 * gets `Command / Directory / Output / Error / Exit Code / Signal /
 * Background PIDs / Process Group PGID`, preceded by one sentence when the
 * call was cancelled or timed out (the partial output is kept); people get
 * the rendered output. A non-zero exit is not a tool error: the model reads
 * the exit code.
 */
export function formatShellResult(facts: ShellCallFacts, result: ShellRunResult): ToolResult {
  const lead = leadSentence(facts, result);
  if (facts.background) {
    const where = result.logPath ? ` Its output goes to ${result.logPath}.` : '';
    const text = `${lead}${where} It keeps running until the session ends.`;
    return { llmContent: block(facts, result, text), returnDisplay: text };
  }
  // A saved output's plain text is what its file holds, so the start and end the model sees match the file's lines.
  const saved = result.savedOutput;
  // Trailing line breaks dropped, as the rendered output drops them.
  const output = saved ? saved.excerpt.replace(/\n+$/, '') : result.output;
  // The sandbox's notes (refused connections) follow the block: the model reads why a client failed.
  const notes = result.notes && result.notes.length > 0 ? `\n${result.notes.join('\n')}` : '';
  const llmContent = (lead ? `${lead}\n${block(facts, result, output)}` : block(facts, result, output)) + notes;
  const shown = display(lead, result);
  const returnDisplay = notes && shown ? `${shown}${notes}` : shown || notes.trimStart();
  const extra = {
    ...(saved ? { savedOutput: withoutExcerpt(saved) } : {}),
    ...(result.truncated ? { displayLines: countLines(returnDisplay) - countLines(result.output) + result.totalLines } : {}),
  };
  // A timeout is a failure of the call (unlike a non-zero exit): typed, so clients and telemetry see it; the partial output stays in llmContent.
  if (result.timedOut)
    return { llmContent, returnDisplay, error: { type: ToolErrorType.EXECUTION_TIMEOUT, message: lead || 'The command timed out.' }, ...extra };
  return { llmContent, returnDisplay, ...extra };
}

function withoutExcerpt(saved: SavedOutputWithExcerpt): SavedOutput {
  const { path, error, bytes, lines, cut, savedBytes, savedLines } = saved;
  return { ...(path !== undefined ? { path } : {}), ...(error !== undefined ? { error } : {}), bytes, lines, cut, savedBytes, savedLines };
}

/** Lines as a display shows them: trailing line breaks do not start a line. */
function countLines(text: string): number {
  const trimmed = text.replace(/\n+$/, '');
  if (trimmed.length === 0) return 0;
  let lines = 1;
  for (let i = trimmed.indexOf('\n'); i >= 0; i = trimmed.indexOf('\n', i + 1)) lines++;
  return lines;
}

function block(facts: ShellCallFacts, result: ShellRunResult, output: string): string {
  const background = result.backgroundPid !== undefined ? String(result.backgroundPid) : '(none)';
  return [
    `Command: ${facts.command}`,
    `Directory: ${facts.directory || '(root)'}`,
    `Output: ${output.length > 0 ? output : '(empty)'}`,
    'Error: (none)',
    `Exit Code: ${result.exitCode ?? '(none)'}`,
    `Signal: ${result.signal ?? '(none)'}`,
    `Background PIDs: ${background}`,
    `Process Group PGID: ${result.pid || '(none)'}`,
  ].join('\n');
}

function leadSentence(facts: ShellCallFacts, result: ShellRunResult): string {
  if (facts.background) return `Command started in the background (PID: ${result.backgroundPid ?? result.pid}).`;
  const partial = result.output.trim().length > 0 ? ' The output before it ended is below.' : ' There was no output before it ended.';
  if (result.aborted) return `Command was cancelled by the user before it could complete.${partial}`;
  if (result.timedOut === 'inactivity') {
    return `Command was cancelled because it produced no output for ${seconds(facts.inactivityMs)}.${partial}`;
  }
  if (result.timedOut === 'wall') {
    return `Command was cancelled because it ran longer than the time limit of ${seconds(facts.wallMs ?? 0)}.${partial}`;
  }
  return '';
}

function display(lead: string, result: ShellRunResult): string {
  const output = result.output.trim().length > 0 ? result.output : '';
  if (lead) return output ? `${lead}\n\n${output}` : lead;
  if (output) return output;
  if (result.signal) return `Command terminated by signal: ${result.signal}`;
  if (result.exitCode !== null && result.exitCode !== 0) return `Command exited with code: ${result.exitCode}`;
  return '';
}

function seconds(ms: number): string {
  const value = ms / 1000;
  return `${Number.isInteger(value) ? value : value.toFixed(1)} s`;
}
