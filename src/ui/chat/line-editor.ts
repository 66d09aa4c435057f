import { type Key, printableText } from './keyboard.js';

/** What a key did to the line. */
export type LineAction = 'edited' | 'submit' | 'interrupt' | 'eof' | 'ignored';

/**
 * The prompt's input line: insert, delete, move, kill, and a history of
 * submitted lines (up/down). Pure state; the chat renders it.
 */
export class LineEditor {
  #text = '';
  #cursor = 0;
  readonly #history: string[] = [];
  #historyIndex = 0;
  #draft = '';

  get text(): string {
    return this.#text;
  }

  /** Cursor position in UTF-16 units of `text`. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Takes the submitted line, remembers it, and empties the editor. */
  take(): string {
    const line = this.#text;
    if (line.trim() !== '' && this.#history.at(-1) !== line) this.#history.push(line);
    this.#historyIndex = this.#history.length;
    this.#text = '';
    this.#cursor = 0;
    return line;
  }

  clear(): void {
    this.#text = '';
    this.#cursor = 0;
  }

  handle(key: Key): LineAction {
    if (key.ctrl) {
      switch (key.name) {
        case 'c':
          return 'interrupt';
        case 'd':
          if (this.#text === '') return 'eof';
          return this.#deleteForward();
        case 'a':
          return this.#move(0);
        case 'e':
          return this.#move(this.#text.length);
        case 'u':
          this.#text = this.#text.slice(this.#cursor);
          return this.#move(0);
        case 'k':
          this.#text = this.#text.slice(0, this.#cursor);
          return 'edited';
        case 'w': {
          const before = this.#text.slice(0, this.#cursor).replace(/\S+\s*$/, '');
          this.#text = before + this.#text.slice(this.#cursor);
          return this.#move(before.length);
        }
        default:
          return 'ignored';
      }
    }
    switch (key.name) {
      case 'return':
      case 'enter':
        return 'submit';
      case 'backspace':
        if (this.#cursor === 0) return 'ignored';
        this.#text = this.#text.slice(0, this.#cursor - 1) + this.#text.slice(this.#cursor);
        return this.#move(this.#cursor - 1);
      case 'delete':
        return this.#deleteForward();
      case 'left':
        return this.#move(this.#cursor - 1);
      case 'right':
        return this.#move(this.#cursor + 1);
      case 'home':
        return this.#move(0);
      case 'end':
        return this.#move(this.#text.length);
      case 'up':
        return this.#recall(-1);
      case 'down':
        return this.#recall(1);
      default: {
        const text = printableText(key);
        if (text === undefined) return 'ignored';
        this.#text = this.#text.slice(0, this.#cursor) + text + this.#text.slice(this.#cursor);
        return this.#move(this.#cursor + text.length);
      }
    }
  }

  #deleteForward(): LineAction {
    if (this.#cursor >= this.#text.length) return 'ignored';
    this.#text = this.#text.slice(0, this.#cursor) + this.#text.slice(this.#cursor + 1);
    return 'edited';
  }

  #move(to: number): LineAction {
    this.#cursor = Math.max(0, Math.min(this.#text.length, to));
    return 'edited';
  }

  #recall(step: number): LineAction {
    if (this.#history.length === 0) return 'ignored';
    if (this.#historyIndex === this.#history.length) this.#draft = this.#text;
    const next = Math.max(0, Math.min(this.#history.length, this.#historyIndex + step));
    if (next === this.#historyIndex) return 'ignored';
    this.#historyIndex = next;
    this.#text = next === this.#history.length ? this.#draft : (this.#history[next] ?? '');
    return this.#move(this.#text.length);
  }
}
