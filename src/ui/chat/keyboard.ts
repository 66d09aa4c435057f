import { emitKeypressEvents } from 'node:readline';

/** A key press as node:readline decodes it. */
export interface Key {
  name?: string;
  sequence: string;
  ctrl: boolean;
  meta: boolean;
  shift: boolean;
}

/** Handles a key; the most recently pushed handler gets every key. */
export type KeyHandler = (key: Key) => void;

/**
 * Raw-mode key input from a TTY. Handlers form a stack: a dialog pushes its
 * handler and pops it when answered, so the line editor below it never sees
 * the dialog's keys. `suspend` hands the terminal to a child process.
 */
export class Keyboard {
  readonly #input: NodeJS.ReadStream;
  readonly #handlers: KeyHandler[] = [];
  #active = false;

  constructor(input: NodeJS.ReadStream) {
    this.#input = input;
  }

  start(): void {
    emitKeypressEvents(this.#input);
    this.resume();
  }

  /** Makes `handler` receive keys until the returned function is called. */
  push(handler: KeyHandler): () => void {
    this.#handlers.push(handler);
    return () => {
      const index = this.#handlers.lastIndexOf(handler);
      if (index !== -1) this.#handlers.splice(index, 1);
    };
  }

  /** Stops reading and leaves raw mode (an editor or the shell gets the terminal). */
  suspend(): void {
    if (!this.#active) return;
    this.#active = false;
    this.#input.off('keypress', this.#onKeypress);
    if (this.#input.isTTY) this.#input.setRawMode(false);
    this.#input.pause();
  }

  resume(): void {
    if (this.#active) return;
    this.#active = true;
    if (this.#input.isTTY) this.#input.setRawMode(true);
    this.#input.on('keypress', this.#onKeypress);
    this.#input.resume();
  }

  stop(): void {
    this.suspend();
    this.#handlers.length = 0;
  }

  readonly #onKeypress = (text: string | undefined, key: Partial<Key> | undefined): void => {
    const normalized: Key = {
      ...(key?.name !== undefined ? { name: key.name } : {}),
      sequence: key?.sequence ?? text ?? '',
      ctrl: key?.ctrl ?? false,
      meta: key?.meta ?? false,
      shift: key?.shift ?? false,
    };
    this.#handlers.at(-1)?.(normalized);
  };
}

/** True for Ctrl+C. */
export function isInterrupt(key: Key): boolean {
  return key.ctrl && key.name === 'c';
}

/** True for a key that types text (no control or meta modifier). */
export function printableText(key: Key): string | undefined {
  if (key.ctrl || key.meta) return undefined;
  const text = key.sequence;
  // eslint-disable-next-line no-control-regex
  if (!text || /[\x00-\x1f\x7f]/.test(text)) return undefined;
  return text;
}
