import type { ToolConfirmationOutcome } from '../../tools/tool.js';
import type { Style } from '../style.js';
import { textWidth } from '../text-width.js';
import type { BusyHandlers, ChatTerminal } from './chat-terminal.js';
import type { ConfirmDialog } from './confirm-dialog.js';
import { isInterrupt, Keyboard, type Key } from './keyboard.js';
import { LineEditor } from './line-editor.js';
import type { Screen } from './screen.js';

function isShiftTab(key: Key): boolean {
  return key.name === 'tab' && key.shift;
}

/** The chat on a real terminal: raw-mode keys, an input line with a cursor, dialogs answered by keys. */
export class TtyTerminal implements ChatTerminal {
  readonly screen: Screen;
  readonly keyDriven = true;
  readonly #keyboard: Keyboard;
  readonly #output: NodeJS.WriteStream;
  readonly #editor = new LineEditor();
  #reading = false;
  #dialog: ConfirmDialog | undefined;

  constructor(options: { input: NodeJS.ReadStream; output: NodeJS.WriteStream; screen: Screen }) {
    this.screen = options.screen;
    this.#output = options.output;
    this.#keyboard = new Keyboard(options.input);
  }

  get dialog(): ConfirmDialog | undefined {
    return this.#dialog;
  }

  start(): void {
    this.#keyboard.start();
    this.#output.on('resize', this.#onResize);
    process.on('SIGTERM', this.#onTerminate);
    process.on('SIGHUP', this.#onTerminate);
  }

  stop(): void {
    process.off('SIGTERM', this.#onTerminate);
    process.off('SIGHUP', this.#onTerminate);
    this.#output.off('resize', this.#onResize);
    this.#keyboard.stop();
    this.screen.close();
  }

  readLine(handlers: { onCycleMode(): void }): Promise<string | null> {
    return new Promise((resolve) => {
      this.#reading = true;
      const finish = (value: string | null) => {
        pop();
        this.#reading = false;
        this.screen.render();
        resolve(value);
      };
      const pop = this.#keyboard.push((key) => {
        if (isShiftTab(key)) return handlers.onCycleMode();
        const action = this.#editor.handle(key);
        if (action === 'submit') return finish(this.#editor.take());
        if (action === 'eof') return finish(null);
        if (action === 'interrupt') {
          if (this.#editor.text === '') return finish(null);
          this.#editor.clear();
        }
        this.screen.render();
      });
      this.screen.render();
    });
  }

  whileBusy(handlers: BusyHandlers): () => void {
    return this.#keyboard.push((key) => {
      if (isInterrupt(key) || key.name === 'escape') handlers.onInterrupt();
      else if (isShiftTab(key)) handlers.onCycleMode();
    });
  }

  choose(dialog: ConfirmDialog, signal: AbortSignal): Promise<ToolConfirmationOutcome | 'interrupt'> {
    return new Promise((resolve) => {
      this.#dialog = dialog;
      const finish = (value: ToolConfirmationOutcome | 'interrupt') => {
        pop();
        signal.removeEventListener('abort', onAbort);
        this.#dialog = undefined;
        this.screen.render();
        resolve(value);
      };
      const onAbort = () => finish('cancel');
      signal.addEventListener('abort', onAbort, { once: true });
      const pop = this.#keyboard.push((key) => {
        const result = dialog.handle(key);
        if (result === 'interrupt') finish('interrupt');
        else if (result === 'moved') this.screen.render();
        else if (result) finish(result.outcome);
      });
      this.screen.render();
    });
  }

  inputLines(style: Style, prefix: string): { lines: string[]; cursor?: { row: number; col: number } } {
    if (this.#dialog) return { lines: this.#dialog.lines(style) };
    if (!this.#reading) return { lines: [] };
    const marker = `${style.cyan('>')} `;
    let before = this.#editor.text.slice(0, this.#editor.cursor);
    const after = this.#editor.text.slice(this.#editor.cursor);
    const room = Math.max(10, (this.#output.columns || 80) - 4 - textWidth(prefix));
    // Keep the cursor on screen: show the tail of a line longer than the terminal.
    while (textWidth(before) > room) before = before.slice(Math.max(1, Math.floor(before.length / 8)));
    const shown = before === this.#editor.text.slice(0, this.#editor.cursor) ? before : `…${before}`;
    const line = `${prefix}${marker}${shown}${after}`;
    return { lines: [line], cursor: { row: 0, col: textWidth(prefix) + 2 + textWidth(shown) } };
  }

  suspend(): void {
    this.screen.suspend();
    this.#keyboard.suspend();
  }

  resume(): void {
    this.#keyboard.resume();
    this.screen.resume();
  }

  readonly #onResize = () => this.screen.render();

  /** Killed: give the terminal back in a usable state (cooked mode, cursor visible) before dying. */
  readonly #onTerminate = (signal: NodeJS.Signals) => {
    this.stop();
    process.exit(signal === 'SIGHUP' ? 129 : 143);
  };
}
