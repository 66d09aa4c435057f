import type { AgentEvent, AgentOutcome } from '../../agent/events.js';
import type { ToolCallRequest } from '../../scheduler/tool-call.js';
import type { Style } from '../style.js';

export interface TextReporterOptions {
  /** Where the model's answer goes (stdout). */
  out: (text: string) => void;
  /** Where tool progress, warnings and errors go (stderr). */
  err: (text: string) => void;
  style: Style;
  /** One line describing a call (after its name); defaults to its arguments. */
  describe?: (request: ToolCallRequest) => string;
  /** Prefix of error lines, e.g. `toolcell run`. */
  prefix: string;
}

/**
 * `toolcell run --output text`: the model's text on stdout exactly as it
 * streams (so it can be piped), and one line per tool call and result on
 * stderr.
 */
export class TextReporter {
  readonly #options: TextReporterOptions;
  #endsWithNewline = true;
  #wroteText = false;

  constructor(options: TextReporterOptions) {
    this.#options = options;
  }

  agentEvent(event: AgentEvent): void {
    const { out, err, style } = this.#options;
    switch (event.type) {
      case 'text':
        out(event.text);
        this.#wroteText = true;
        this.#endsWithNewline = event.text.endsWith('\n');
        return;
      case 'tool_call': {
        this.#breakLine();
        const description = this.#options.describe?.(event.request) ?? JSON.stringify(event.request.args);
        err(`${style.cyan('→')} ${style.bold(event.request.name)} ${style.dim(truncate(description, 160))}\n`);
        return;
      }
      case 'tool_result': {
        const { call } = event;
        const took = style.dim(`(${call.durationMs} ms)`);
        if (call.status === 'success') err(`${style.green('✓')} ${call.request.name} ${took}\n`);
        else {
          const mark = call.status === 'cancelled' ? style.yellow('○') : style.red('✗');
          const error = call.response.error;
          err(`${mark} ${call.request.name} ${took} ${error ? `${error.type}: ${truncate(error.message, 300)}` : call.status}\n`);
        }
        return;
      }
      case 'warning':
        this.#breakLine();
        err(`${style.yellow(`${this.#options.prefix}: warning:`)} ${event.message}\n`);
        return;
      default:
        return;
    }
  }

  /** Ends the answer with a newline and reports why the run stopped, if it did not complete. */
  finish(outcome: AgentOutcome): void {
    if (this.#wroteText && !this.#endsWithNewline) this.#options.out('\n');
    this.#endsWithNewline = true;
    if (outcome.error) {
      const { err, style, prefix } = this.#options;
      err(`${style.red(`${prefix}: ${outcome.error.message}`)} ${style.dim(`[${outcome.error.code}]`)}\n`);
    }
  }

  /** Tool lines go to stderr; on a shared terminal they must not glue onto a half-written answer line. */
  #breakLine(): void {
    if (this.#wroteText && !this.#endsWithNewline) {
      this.#options.out('\n');
      this.#endsWithNewline = true;
    }
  }
}

function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
