import type { FunctionDeclaration } from '@google/genai';
import { assertGeminiFunctionName } from '../tools/names.js';
import type { Tool } from '../tools/tool.js';

export interface ToolRegistryOptions {
  /** Called when a registration replaces a tool of the same name. Defaults to a console warning. */
  onWarning?: (message: string) => void;
}

/**
 * Holds every tool the model may call: built-in, command-discovered and MCP.
 * Names are checked against Gemini's rules on registration.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool<unknown>>();
  readonly #onWarning: (message: string) => void;

  constructor(options: ToolRegistryOptions = {}) {
    this.#onWarning = options.onWarning ?? ((message) => console.warn(message));
  }

  /** Adds a tool; a tool of the same name is replaced, with a warning. */
  register(tool: Tool<unknown>): void {
    assertGeminiFunctionName(tool.name);
    if (this.#tools.has(tool.name)) this.#onWarning(`Tool "${tool.name}" is already registered. Overwriting.`);
    this.#tools.set(tool.name, tool);
  }

  /** Removes a tool; returns whether it was there. */
  unregister(name: string): boolean {
    return this.#tools.delete(name);
  }

  /** Removes every tool for which `predicate` is true (e.g. all of one MCP server's). */
  unregisterWhere(predicate: (tool: Tool<unknown>) => boolean): number {
    let removed = 0;
    for (const [name, tool] of this.#tools) {
      if (predicate(tool)) {
        this.#tools.delete(name);
        removed++;
      }
    }
    return removed;
  }

  get(name: string): Tool<unknown> | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Every tool, sorted by name. */
  list(): Tool<unknown>[] {
    return [...this.#tools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The FunctionDeclarations of every tool, sorted by name: what the model is given. */
  functionDeclarations(): FunctionDeclaration[] {
    return this.list().map((tool) => tool.declaration());
  }
}
