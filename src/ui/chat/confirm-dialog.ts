import type { ConfirmationRequest } from '../../scheduler/confirmation-flow.js';
import type { ToolConfirmationOutcome } from '../../tools/tool.js';
import { renderDiff } from '../diff-view.js';
import type { Style } from '../style.js';
import { isInterrupt, type Key } from './keyboard.js';

export interface ConfirmChoice {
  label: string;
  outcome: ToolConfirmationOutcome;
}

/** The longest diff printed in full before a dialog; longer ones are cut (the file is not). */
const MAX_DIFF_LINES = 400;

/** The question and the answers offered for one confirmation (as Gemini CLI's ToolConfirmationMessage offers them). */
export function dialogFor(request: ConfirmationRequest, options: { canModify: boolean }): { question: string; choices: ConfirmChoice[] } {
  const { details } = request;
  const no: ConfirmChoice = { label: 'No (esc)', outcome: 'cancel' };
  switch (details.type) {
    case 'edit':
      return {
        question: 'Apply this change?',
        choices: [
          { label: 'Yes, allow once', outcome: 'proceed_once' },
          { label: 'Yes, allow always', outcome: 'proceed_always' },
          ...(options.canModify ? [{ label: 'Modify with external editor', outcome: 'modify_with_editor' as const }] : []),
          no,
        ],
      };
    case 'exec':
      return {
        question: `Allow execution of "${details.rootCommand}"?`,
        choices: [
          { label: 'Yes, allow once', outcome: 'proceed_once' },
          {
            label: details.alwaysAllow
              ? `Yes, allow always ${details.alwaysAllow.prefixes.map((prefix) => `"${prefix} …"`).join(', ')} (a rule in ${details.alwaysAllow.file})`
              : `Yes, allow always "${details.rootCommand} …"`,
            outcome: 'proceed_always',
          },
          no,
        ],
      };
    case 'mcp':
      return {
        question: `Allow execution of MCP tool "${details.toolName}" from server "${details.serverName}"?`,
        choices: [
          { label: 'Yes, allow once', outcome: 'proceed_once' },
          { label: `Yes, always allow tool "${details.toolName}" from server "${details.serverName}"`, outcome: 'proceed_always_tool' },
          { label: `Yes, always allow all tools from server "${details.serverName}"`, outcome: 'proceed_always_server' },
          no,
        ],
      };
    case 'info':
      return {
        question: 'Do you want to proceed?',
        choices: [{ label: 'Yes, allow once', outcome: 'proceed_once' }, { label: 'Yes, allow always', outcome: 'proceed_always' }, no],
      };
  }
}

/** What is being approved, printed into the scrollback before the dialog (so a long diff can be scrolled). */
export function detailsBlock(request: ConfirmationRequest, style: Style): string[] {
  const { details } = request;
  const lines = [`${style.yellow('?')} ${style.bold(details.title)}  ${style.dim(`${request.toolName}: ${request.description}`)}`];
  switch (details.type) {
    case 'edit':
      lines.push(`  ${style.dim('File:')} ${details.filePath}`);
      lines.push(...renderDiff(details.fileDiff || '(no textual change)', style, { maxLines: MAX_DIFF_LINES }).map((line) => `  ${line}`));
      break;
    case 'exec':
      lines.push(`  ${style.dim('Command:')}   ${style.bold(details.command)}`);
      lines.push(`  ${style.dim('Directory:')} ${details.directory}`);
      lines.push(`  ${style.dim('Runs in:')}   ${details.sandbox}`);
      break;
    case 'mcp':
      lines.push(`  ${style.dim('MCP server:')} ${details.serverName}`);
      lines.push(`  ${style.dim('Tool:')}       ${details.toolName}${details.toolDisplayName !== details.toolName ? ` (${details.toolDisplayName})` : ''}`);
      break;
    case 'info':
      lines.push(`  ${details.prompt}`);
      if (details.urls?.length) {
        lines.push(`  ${style.dim('URLs to fetch:')}`);
        for (const url of details.urls) lines.push(`   - ${url}`);
      }
      break;
  }
  return lines;
}

/** The answer a key gives, if it gives one: `interrupt` means Ctrl+C (cancel the whole turn). */
export type DialogKeyResult = { outcome: ToolConfirmationOutcome } | 'interrupt' | 'moved' | undefined;

/** Arrow keys move, Enter or a number chooses, Esc declines. */
export class ConfirmDialog {
  readonly question: string;
  readonly choices: ConfirmChoice[];
  #selected = 0;

  constructor(dialog: { question: string; choices: ConfirmChoice[] }) {
    this.question = dialog.question;
    this.choices = dialog.choices;
  }

  get selected(): number {
    return this.#selected;
  }

  handle(key: Key): DialogKeyResult {
    if (isInterrupt(key)) return 'interrupt';
    if (key.name === 'escape') return { outcome: 'cancel' };
    if (key.name === 'up' || key.name === 'k') {
      this.#selected = (this.#selected - 1 + this.choices.length) % this.choices.length;
      return 'moved';
    }
    if (key.name === 'down' || key.name === 'j' || (key.name === 'tab' && !key.shift)) {
      this.#selected = (this.#selected + 1) % this.choices.length;
      return 'moved';
    }
    if (key.name === 'return' || key.name === 'enter') return { outcome: this.choices[this.#selected]!.outcome };
    const number = /^[1-9]$/.test(key.sequence) ? Number(key.sequence) : NaN;
    if (number >= 1 && number <= this.choices.length) {
      this.#selected = number - 1;
      return { outcome: this.choices[number - 1]!.outcome };
    }
    return undefined;
  }

  /** The dialog's lines for the live region. */
  lines(style: Style): string[] {
    return [
      style.bold(this.question),
      ...this.choices.map((choice, index) => {
        const text = `${index + 1}. ${choice.label}`;
        return index === this.#selected ? `${style.green('❯')} ${style.green(text)}` : `  ${text}`;
      }),
      style.dim(`↑↓ move · 1-${this.choices.length} or Enter choose · Esc decline`),
    ];
  }

  /** The answer a typed line gives in plain (non-terminal) mode: a number, y/yes, n/no, a (always). */
  static answerFromLine(line: string, choices: ConfirmChoice[]): ToolConfirmationOutcome | undefined {
    const text = line.trim().toLowerCase();
    if (/^\d+$/.test(text)) return choices[Number(text) - 1]?.outcome;
    if (text === 'y' || text === 'yes') return 'proceed_once';
    if (text === 'n' || text === 'no' || text === '') return 'cancel';
    if (text === 'a' || text === 'always') return choices.find((c) => c.outcome === 'proceed_always')?.outcome;
    return undefined;
  }
}
