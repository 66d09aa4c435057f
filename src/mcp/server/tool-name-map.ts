import { MCP_TOOL_NAME, toMcpToolName } from '../../tools/names.js';

/**
 * The names `toolcell serve` lists: each registry (Gemini) name mapped to a
 * valid MCP name with `toMcpToolName`, made unique with a `_2`, `_3`, …
 * suffix in the rare case two map to the same; and the way back.
 */
export class ToolNameMap {
  readonly #toMcp = new Map<string, string>();
  readonly #toGemini = new Map<string, string>();

  constructor(geminiNames: Iterable<string>) {
    for (const geminiName of [...geminiNames].sort()) {
      const base = toMcpToolName(geminiName);
      let name = base;
      for (let n = 2; this.#toGemini.has(name); n++) name = `${base.slice(0, 128 - `_${n}`.length)}_${n}`;
      this.#toMcp.set(geminiName, name);
      this.#toGemini.set(name, geminiName);
    }
  }

  /** The MCP name of a registered tool. */
  toMcp(geminiName: string): string | undefined {
    return this.#toMcp.get(geminiName);
  }

  /** The registry name behind an MCP name, or undefined for an unknown or invalid one. */
  toGemini(mcpName: string): string | undefined {
    if (!MCP_TOOL_NAME.test(mcpName)) return undefined;
    return this.#toGemini.get(mcpName);
  }
}
