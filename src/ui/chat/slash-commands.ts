import { APPROVAL_MODES, type ApprovalMode, isApprovalMode } from '../../scheduler/approval.js';

/** What a `/command` line asks for. */
export type SlashCommand =
  { type: 'quit' } | { type: 'help' } | { type: 'clear' } | { type: 'approval'; mode?: ApprovalMode } | { type: 'unknown'; message: string };

export const HELP_TEXT = `Commands:
  /approval [MODE]  show or set the approval mode: ${APPROVAL_MODES.join(' | ')}
  /clear            forget the conversation so far
  /help             this help
  /quit, /exit      leave (also Ctrl+D, or Ctrl+C on an empty line)
Keys: Shift+Tab cycles the approval mode · Esc or Ctrl+C cancels a running request
In a confirmation: ↑↓ and Enter, or the option's number · Esc declines`;

/** Parses a line starting with `/`; undefined for anything else (a prompt). */
export function parseSlashCommand(line: string): SlashCommand | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('/')) return undefined;
  const [name = '', ...args] = trimmed.slice(1).split(/\s+/);
  switch (name.toLowerCase()) {
    case 'quit':
    case 'exit':
      return { type: 'quit' };
    case 'help':
    case '?':
      return { type: 'help' };
    case 'clear':
      return { type: 'clear' };
    case 'approval':
    case 'mode': {
      const mode = args[0];
      if (mode === undefined) return { type: 'approval' };
      const match = APPROVAL_MODES.find((m) => m.toLowerCase() === mode.toLowerCase());
      if (match && isApprovalMode(match)) return { type: 'approval', mode: match };
      return { type: 'unknown', message: `Unknown approval mode "${mode}": use one of ${APPROVAL_MODES.join(', ')}.` };
    }
    default:
      return { type: 'unknown', message: `Unknown command /${name}. Type /help for the list.` };
  }
}
