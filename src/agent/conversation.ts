import type { Content, Part } from '@google/genai';

/**
 * The chat history sent with every request. It keeps Gemini's shape valid
 * whatever interrupted a turn: roles alternate, because user parts that
 * follow user parts (a new prompt after a cancelled batch's function
 * responses) join the same user turn, and a model turn with function calls
 * is always followed by the user turn holding their responses.
 */
export class Conversation {
  readonly #contents: Content[] = [];

  /** A copy of the history, oldest first. */
  contents(): Content[] {
    return this.#contents.map((content) => ({ role: content.role, parts: [...(content.parts ?? [])] }));
  }

  get length(): number {
    return this.#contents.length;
  }

  /** Adds user parts (a prompt, function responses, or both). */
  addUser(parts: Part[]): void {
    if (parts.length === 0) return;
    const last = this.#contents[this.#contents.length - 1];
    if (last?.role === 'user') last.parts = [...(last.parts ?? []), ...parts];
    else this.#contents.push({ role: 'user', parts: [...parts] });
  }

  /** Adds a complete model answer. Empty answers are not recorded (the API rejects empty parts). */
  addModel(parts: Part[]): void {
    if (parts.length === 0) return;
    const last = this.#contents[this.#contents.length - 1];
    if (last?.role === 'model') last.parts = [...(last.parts ?? []), ...parts];
    else this.#contents.push({ role: 'model', parts: [...parts] });
  }

  /** Forgets everything (`/clear` in the chat). */
  clear(): void {
    this.#contents.length = 0;
  }
}
