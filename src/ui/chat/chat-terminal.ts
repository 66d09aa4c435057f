import type { ToolConfirmationOutcome } from '../../tools/tool.js';
import type { Style } from '../style.js';
import type { ConfirmDialog } from './confirm-dialog.js';
import type { Screen } from './screen.js';

/** Keys (or signals) that matter while the agent works. */
export interface BusyHandlers {
  /** Ctrl+C or Esc: cancel the running request. */
  onInterrupt(): void;
  /** Shift+Tab: switch the approval mode. */
  onCycleMode(): void;
}

/**
 * How the chat talks to a person: a real terminal (keys in raw mode, a live
 * region redrawn in place) or plain lines (pipes, files, dumb terminals).
 */
export interface ChatTerminal {
  readonly screen: Screen;
  /** True when keys drive the chat (and Shift+Tab etc. exist). */
  readonly keyDriven: boolean;
  start(): void;
  stop(): void;
  /** Reads one line at the prompt; null when the person wants to leave (Ctrl+D, Ctrl+C on an empty line, end of input). */
  readLine(handlers: { onCycleMode(): void }): Promise<string | null>;
  /** Routes interrupt keys to `handlers` until the returned function is called. */
  whileBusy(handlers: BusyHandlers): () => void;
  /** Asks a dialog; resolves with the chosen outcome, or `interrupt` (Ctrl+C: cancel the whole request). */
  choose(dialog: ConfirmDialog, signal: AbortSignal): Promise<ToolConfirmationOutcome | 'interrupt'>;
  /** The live-region lines of the prompt (input line) or the dialog, with the cursor row relative to them. */
  inputLines(style: Style, prefix: string): { lines: string[]; cursor?: { row: number; col: number } };
  /** The dialog being asked, if any. */
  readonly dialog: ConfirmDialog | undefined;
  /** Hands the terminal to a child process (an editor) and takes it back. */
  suspend(): void;
  resume(): void;
}
