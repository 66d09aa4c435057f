import { createInterface, type Interface } from 'node:readline';
import type { ToolConfirmationOutcome } from '../../tools/tool.js';
import type { Style } from '../style.js';
import type { BusyHandlers, ChatTerminal } from './chat-terminal.js';
import { ConfirmDialog } from './confirm-dialog.js';
import type { Screen } from './screen.js';

/**
 * The chat without a terminal (input or output is a pipe or file): prompts
 * and answers are read as lines, output is sequential text with no redraws or
 * progress, and SIGINT cancels a running request.
 */
export class PlainTerminal implements ChatTerminal {
  readonly screen: Screen;
  readonly keyDriven = false;
  readonly dialog = undefined;
  readonly #input: NodeJS.ReadableStream;
  readonly #prompt: () => string;
  #lines: Interface | undefined;
  #iterator: AsyncIterator<string> | undefined;
  #busy: BusyHandlers | undefined;

  constructor(options: { input: NodeJS.ReadableStream; screen: Screen; prompt: () => string }) {
    this.screen = options.screen;
    this.#input = options.input;
    this.#prompt = options.prompt;
  }

  start(): void {
    this.#lines = createInterface({ input: this.#input, terminal: false });
    this.#iterator = this.#lines[Symbol.asyncIterator]();
    process.on('SIGINT', this.#onSigint);
  }

  stop(): void {
    process.off('SIGINT', this.#onSigint);
    this.#lines?.close();
    this.screen.close();
  }

  async readLine(): Promise<string | null> {
    this.screen.print(this.#prompt());
    return this.#next();
  }

  whileBusy(handlers: BusyHandlers): () => void {
    this.#busy = handlers;
    return () => {
      if (this.#busy === handlers) this.#busy = undefined;
    };
  }

  async choose(dialog: ConfirmDialog, signal: AbortSignal): Promise<ToolConfirmationOutcome | 'interrupt'> {
    const choices = dialog.choices.map((choice, index) => `  ${index + 1}. ${choice.label}`);
    this.screen.print([dialog.question, ...choices, `Answer 1-${dialog.choices.length} (y = once, n = no):`].join('\n'));
    for (;;) {
      if (signal.aborted) return 'cancel';
      const line = await this.#next();
      if (line === null) return 'cancel';
      const outcome = ConfirmDialog.answerFromLine(line, dialog.choices);
      if (outcome) return outcome;
      this.screen.print(`Please answer with a number from 1 to ${dialog.choices.length}.`);
    }
  }

  inputLines(_style: Style, _prefix: string): { lines: string[] } {
    return { lines: [] };
  }

  suspend(): void {}

  resume(): void {}

  async #next(): Promise<string | null> {
    const step = await this.#iterator?.next();
    return !step || step.done ? null : step.value;
  }

  readonly #onSigint = () => {
    if (this.#busy) this.#busy.onInterrupt();
    else {
      this.stop();
      process.exit(130);
    }
  };
}
