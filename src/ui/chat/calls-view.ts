import type { CompletedToolCall, ToolCall } from '../../scheduler/tool-call.js';
import type { LiveOutput } from '../../tools/tool.js';
import { renderDiff } from '../diff-view.js';
import { sanitize, type Style } from '../style.js';
import { formatBytes } from '../text-width.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function spinnerFrame(tick: number): string {
  return SPINNER[tick % SPINNER.length]!;
}

/** One line describing a call in any state, from its tool when it has one. */
export function describeCall(call: ToolCall): string {
  try {
    if ('params' in call && call.tool) return sanitize(call.tool.describe(call.params));
    if (call.tool) {
      const validation = call.tool.validateParams(call.request.args);
      if (validation.ok) return sanitize(call.tool.describe(validation.params));
    }
  } catch {
    // A tool's describe must not break the display.
  }
  const args = JSON.stringify(call.request.args);
  return sanitize(args === '{}' ? '' : args);
}

function header(mark: string, call: ToolCall, style: Style, suffix = ''): string {
  const description = describeCall(call);
  return `${mark} ${style.bold(call.request.name)}${description ? ` ${style.dim(description)}` : ''}${suffix}`;
}

/**
 * The live view of the calls not yet finished: a status mark, the call's
 * description, and for a running call the tail of its live output (or the
 * bytes received of a binary stream).
 */
export function activeCallLines(
  calls: readonly ToolCall[],
  liveOutput: ReadonlyMap<string, LiveOutput>,
  style: Style,
  options: { tick: number; outputLines: number },
): string[] {
  const lines: string[] = [];
  for (const call of calls) {
    switch (call.status) {
      case 'validating':
        lines.push(header(style.dim('…'), call, style));
        break;
      case 'awaiting_approval':
        lines.push(
          header(
            style.yellow('?'),
            call,
            style,
            style.yellow(
              call.confirmationDetails.type === 'edit' && call.confirmationDetails.isModifying ? '  editing in external editor…' : '  waiting for approval',
            ),
          ),
        );
        break;
      case 'scheduled':
        lines.push(header(style.dim('○'), call, style));
        break;
      case 'executing': {
        lines.push(header(style.cyan(spinnerFrame(options.tick)), call, style));
        const output = liveOutput.get(call.request.callId) ?? call.liveOutput;
        lines.push(...liveOutputLines(output, style, options.outputLines));
        break;
      }
      default:
        break;
    }
  }
  return lines;
}

function liveOutputLines(output: LiveOutput | undefined, style: Style, max: number): string[] {
  if (output === undefined) return [];
  if (typeof output !== 'string') {
    const verb = output.type === 'binary_detected' ? 'Binary output detected' : 'Receiving binary output';
    return [`  ${style.dim(`[${verb}… ${formatBytes(output.bytesReceived)} received]`)}`];
  }
  const lines = sanitize(output).replace(/\n+$/, '').split('\n');
  return lines.slice(-max).map((line) => `  ${style.dim('│')} ${style.dim(line)}`);
}

/** Decisions after which the person has just seen the call's diff in the dialog. */
const CONFIRMED = new Set(['accept', 'accept_always', 'modify']);

/**
 * A finished call for the scrollback: its mark and duration, then its result
 * (a diff coloured, unless it was just shown for approval) or error.
 */
export function completedCallLines(call: CompletedToolCall, style: Style, options: { resultLines: number }): string[] {
  const took = style.dim(` (${formatDuration(call.durationMs)})`);
  if (call.status === 'success') {
    const lines = [header(style.green('✓'), call, style, took)];
    const display = call.response.resultDisplay;
    if (display !== undefined && typeof display !== 'string') {
      if (call.decision && CONFIRMED.has(call.decision)) return lines;
      lines.push(...renderDiff(sanitize(display.fileDiff), style, { maxLines: options.resultLines * 4 }).map((line) => `  ${line}`));
    } else if (display) {
      const body = sanitize(display).replace(/\n+$/, '').split('\n');
      // A long output's display keeps only its start and end: count the lines of all of it.
      const total = Math.max(body.length, call.response.displayLines ?? 0);
      lines.push(...body.slice(0, options.resultLines).map((line) => `  ${style.dim(line)}`));
      if (total > options.resultLines) lines.push(`  ${style.dim(`… ${total - options.resultLines} more line(s)`)}`);
    }
    return lines;
  }
  const error = call.response.error;
  const paint = call.status === 'cancelled' ? style.yellow : style.red;
  const lines = [header(paint(call.status === 'cancelled' ? '⊘' : '✗'), call, style, took)];
  lines.push(`  ${paint(`${error?.type ?? call.status}: ${sanitize(error?.message ?? '').split('\n')[0] ?? ''}`)}`);
  return lines;
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
