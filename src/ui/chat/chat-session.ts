import type { Agent } from '../../agent/agent.js';
import type { AgentOutcome } from '../../agent/events.js';
import type { ToolRegistry } from '../../registry/tool-registry.js';
import type { ApprovalMode } from '../../scheduler/approval.js';
import type { ConfirmationRequest, ExternalEditor } from '../../scheduler/confirmation-flow.js';
import type { Scheduler, SchedulerOptions } from '../../scheduler/scheduler.js';
import { isCompleted, type ToolCall } from '../../scheduler/tool-call.js';
import type { LiveOutput, ToolConfirmationOutcome } from '../../tools/tool.js';
import { sanitize, type Style } from '../style.js';
import { activeCallLines, completedCallLines, spinnerFrame } from './calls-view.js';
import type { ChatTerminal } from './chat-terminal.js';
import { ConfirmDialog, detailsBlock, dialogFor } from './confirm-dialog.js';
import { createExternalEditor } from './external-editor.js';
import type { LiveView } from './screen.js';
import { HELP_TEXT, parseSlashCommand } from './slash-commands.js';
import { MODE_HINTS, nextApprovalMode, paintMode, statusLine } from './status-bar.js';

export interface ChatSessionOptions {
  style: Style;
  model: string;
  workspace: string;
  /** Lines of a running call's live output shown (default 6). */
  outputLines?: number;
  /** Lines of a finished call's result printed (default 8). */
  resultLines?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * The interactive chat (`toolcell chat`): reads prompts, runs the agent,
 * streams its text, shows every tool call live, asks confirmations and lets
 * the approval mode change at any time. Create it, give `schedulerHooks()` to
 * the scheduler, then `attach` the agent and `run`.
 */
export class ChatSession {
  readonly #options: ChatSessionOptions;
  readonly #style: Style;
  #terminal: ChatTerminal | undefined;
  #agent: Agent | undefined;
  #scheduler: Scheduler | undefined;
  #registry: Pick<ToolRegistry, 'get'> | undefined;
  #calls: readonly ToolCall[] = [];
  readonly #printed = new Set<string>();
  readonly #liveOutput = new Map<string, LiveOutput>();
  #abort: AbortController | undefined;
  #tick = 0;
  #spinner: NodeJS.Timeout | undefined;

  constructor(options: ChatSessionOptions) {
    this.#options = options;
    this.#style = options.style;
  }

  /** The live region's content: partial text, running calls, dialog or input line, status bar. */
  view(): LiveView {
    const style = this.#style;
    const terminal = this.#terminal;
    const lines: string[] = [];
    if (terminal?.screen.pendingText) lines.push(terminal.screen.pendingText);
    lines.push(...activeCallLines(this.#calls, this.#liveOutput, style, { tick: this.#tick, outputLines: this.#options.outputLines ?? 6 }));
    const input = terminal?.inputLines(style, '') ?? { lines: [] };
    if (this.#abort && !terminal?.dialog) {
      const what = this.#abort.signal.aborted ? 'Cancelling…' : this.#calls.some((c) => c.status === 'executing') ? 'Running tools…' : 'Working…';
      lines.push(`${style.cyan(spinnerFrame(this.#tick))} ${what} ${style.dim('(esc to cancel)')}`);
    }
    if (terminal?.dialog && lines.length > 0) lines.push('');
    const inputRow = lines.length;
    lines.push(...input.lines);
    lines.push(statusLine({ mode: this.#mode, model: this.#options.model, workspace: this.#options.workspace, keys: terminal?.keyDriven ?? false }, style));
    return { lines, ...(input.cursor ? { cursor: { row: inputRow + input.cursor.row, col: input.cursor.col } } : {}) };
  }

  /** confirm / editor / onUpdate / onOutput for the scheduler this chat drives. */
  schedulerHooks(): Pick<SchedulerOptions, 'confirm' | 'editor' | 'onUpdate' | 'onOutput'> {
    const editor: ExternalEditor = createExternalEditor({
      ...(this.#options.env ? { env: this.#options.env } : {}),
      suspendTerminal: () => this.#terminal?.suspend(),
      resumeTerminal: () => this.#terminal?.resume(),
      onError: (message) => this.#print(this.#style.red(message)),
    });
    return {
      confirm: (request, signal) => this.#confirm(request, signal),
      editor,
      onUpdate: (calls) => this.#onUpdate(calls),
      onOutput: (callId, output) => {
        this.#liveOutput.set(callId, output);
        this.#terminal?.screen.requestRender();
      },
    };
  }

  attach(options: { terminal: ChatTerminal; agent: Agent; scheduler: Scheduler; registry: Pick<ToolRegistry, 'get'> }): void {
    this.#terminal = options.terminal;
    this.#agent = options.agent;
    this.#scheduler = options.scheduler;
    this.#registry = options.registry;
  }

  /** Runs until the person leaves; resolves with the exit code. */
  async run(): Promise<number> {
    const terminal = this.#required(this.#terminal);
    const style = this.#style;
    terminal.start();
    this.#print(`${style.bold('toolcell chat')} ${style.dim(`· ${this.#options.model} · ${this.#options.workspace}`)}`);
    this.#print(style.dim(`Type a request, or /help. Approval mode: ${this.#mode} (${MODE_HINTS[this.#mode]}).`));
    try {
      for (;;) {
        const line = await terminal.readLine({ onCycleMode: () => this.#cycleMode() });
        if (line === null) break;
        if (line.trim() === '') continue;
        const command = parseSlashCommand(line);
        if (!command) {
          await this.#send(line);
          continue;
        }
        this.#print(`${style.cyan('>')} ${sanitize(line)}`);
        if (command.type === 'quit') break;
        if (command.type === 'help') this.#print(HELP_TEXT);
        else if (command.type === 'clear') {
          this.#required(this.#agent).conversation.clear();
          this.#print(style.dim('Conversation cleared.'));
        } else if (command.type === 'approval') {
          if (command.mode) this.#setMode(command.mode);
          else this.#print(`Approval mode: ${paintMode(this.#mode, style)} (${MODE_HINTS[this.#mode]})`);
        } else this.#print(style.yellow(command.message));
      }
    } finally {
      this.#stopSpinner();
      terminal.stop();
    }
    return 0;
  }

  async #send(prompt: string): Promise<void> {
    const terminal = this.#required(this.#terminal);
    const agent = this.#required(this.#agent);
    this.#print(`${this.#style.cyan('>')} ${sanitize(prompt)}`);
    const abort = new AbortController();
    this.#abort = abort;
    const endBusy = terminal.whileBusy({ onInterrupt: () => this.#interrupt(), onCycleMode: () => this.#cycleMode() });
    this.#startSpinner();
    let outcome: AgentOutcome | undefined;
    try {
      for await (const event of agent.send(prompt, { signal: abort.signal })) {
        if (event.type === 'text') terminal.screen.streamText(sanitize(event.text));
        else if (event.type === 'tool_call') terminal.screen.endText();
        else if (event.type === 'tool_result') this.#printCompleted(event.call);
        else if (event.type === 'warning') this.#print(this.#style.yellow(`! ${event.message}`));
        else if (event.type === 'finished') outcome = event.outcome;
      }
    } finally {
      endBusy();
      this.#stopSpinner();
      this.#abort = undefined;
      this.#calls = [];
      this.#liveOutput.clear();
      terminal.screen.endText();
    }
    if (outcome && outcome.status !== 'completed' && outcome.error) {
      const paint = outcome.status === 'error' ? this.#style.red : this.#style.yellow;
      this.#print(`${paint(`${outcome.status === 'error' ? '✗' : '⊘'} ${outcome.error.message}`)} ${this.#style.dim(`[${outcome.error.code}]`)}`);
    }
    terminal.screen.render();
  }

  async #confirm(request: ConfirmationRequest, signal: AbortSignal): Promise<{ outcome: ToolConfirmationOutcome }> {
    const terminal = this.#required(this.#terminal);
    terminal.screen.endText();
    const canModify = request.details.type === 'edit' && Boolean(this.#registry?.get(request.toolName)?.modifiable);
    const dialog = new ConfirmDialog(dialogFor(request, { canModify }));
    this.#print(detailsBlock({ ...request, description: sanitize(request.description) }, this.#style).join('\n'));
    const answer = await terminal.choose(dialog, signal);
    if (answer === 'interrupt') {
      this.#interrupt();
      return { outcome: 'cancel' };
    }
    const label = dialog.choices.find((choice) => choice.outcome === answer)?.label ?? answer;
    this.#print(this.#style.dim(`  → ${label}`));
    return { outcome: answer };
  }

  #onUpdate(calls: readonly ToolCall[]): void {
    this.#calls = calls;
    for (const call of calls) if (isCompleted(call)) this.#printCompleted(call);
    this.#terminal?.screen.requestRender();
  }

  #printCompleted(call: ToolCall): void {
    if (!isCompleted(call) || this.#printed.has(call.request.callId)) return;
    this.#printed.add(call.request.callId);
    this.#liveOutput.delete(call.request.callId);
    this.#print(completedCallLines(call, this.#style, { resultLines: this.#options.resultLines ?? 8 }).join('\n'));
  }

  #interrupt(): void {
    if (!this.#abort) return;
    if (!this.#abort.signal.aborted) {
      this.#abort.abort();
      this.#terminal?.screen.render();
    }
  }

  get #mode(): ApprovalMode {
    return this.#scheduler?.approvalMode ?? 'default';
  }

  #cycleMode(): void {
    this.#setMode(nextApprovalMode(this.#mode));
  }

  #setMode(mode: ApprovalMode): void {
    this.#required(this.#scheduler).setApprovalMode(mode);
    this.#print(`${this.#style.dim('Approval mode:')} ${paintMode(mode, this.#style)} ${this.#style.dim(`(${MODE_HINTS[mode]})`)}`);
  }

  #print(text: string): void {
    this.#terminal?.screen.print(text);
  }

  #startSpinner(): void {
    const screen = this.#terminal?.screen;
    if (!screen?.interactive) return;
    this.#spinner = setInterval(() => {
      this.#tick++;
      screen.requestRender();
    }, 120);
  }

  #stopSpinner(): void {
    clearInterval(this.#spinner);
    this.#spinner = undefined;
  }

  #required<T>(value: T | undefined): T {
    if (value === undefined) throw new Error('ChatSession: attach() must be called before run()');
    return value;
  }
}
