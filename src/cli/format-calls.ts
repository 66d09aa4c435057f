import { styleText } from 'node:util';
import type { CompletedToolCall } from '../scheduler/tool-call.js';
import type { ToolResultDisplay } from '../tools/tool.js';
import { sanitize } from '../ui/style.js';

type Style = Parameters<typeof styleText>[0];

/**
 * Human-readable report of a finished batch: one block per call, diffs
 * coloured when `color`. Everything printed comes from the model or tools, so
 * it is sanitised first: no escape sequence reaches the terminal raw.
 */
export function formatCompletedCalls(calls: readonly CompletedToolCall[], options: { color: boolean }): string {
  const paint = (style: Style, text: string) => (options.color ? styleText(style, sanitize(text)) : sanitize(text));
  const blocks = calls.map((call) => {
    const mark = call.status === 'success' ? paint('green', '✓') : call.status === 'cancelled' ? paint('yellow', '○') : paint('red', '✗');
    const what = call.tool ? safeDescribe(call) : call.request.name;
    const header = `${mark} ${paint('bold', call.request.name)} ${paint('dim', what)} ${paint('dim', `(${call.durationMs} ms)`)}`;
    const body =
      call.status === 'success'
        ? formatDisplay(call.response.resultDisplay, paint)
        : `${paint(call.status === 'cancelled' ? 'yellow' : 'red', `${call.response.error?.type ?? call.status}: ${call.response.error?.message ?? ''}`)}${
            call.response.resultDisplay && !isJustTheMessage(call.response.resultDisplay, call.response.error?.message)
              ? `\n${formatDisplay(call.response.resultDisplay, paint)}`
              : ''
          }`;
    return `${header}\n${indent(body)}`;
  });
  return `${blocks.join('\n\n')}\n`;
}

function safeDescribe(call: CompletedToolCall): string {
  try {
    const validation = call.tool!.validateParams(call.request.args);
    return validation.ok ? call.tool!.describe(validation.params) : '';
  } catch {
    return '';
  }
}

function formatDisplay(display: ToolResultDisplay | undefined, paint: (style: Style, text: string) => string): string {
  if (display === undefined) return '';
  if (typeof display === 'string') return sanitize(display);
  return display.fileDiff
    .split('\n')
    .map((line) => {
      if (line.startsWith('+++') || line.startsWith('---')) return paint('bold', line);
      if (line.startsWith('+')) return paint('green', line);
      if (line.startsWith('-')) return paint('red', line);
      if (line.startsWith('@@')) return paint('cyan', line);
      return sanitize(line);
    })
    .join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line.length > 0 ? `  ${line}` : line))
    .join('\n');
}

/** A display that only repeats the error message (tools often show `Error: <message>`) is not printed twice. */
function isJustTheMessage(display: ToolResultDisplay, message: string | undefined): boolean {
  return typeof display === 'string' && (display === message || display === `Error: ${message}`);
}
