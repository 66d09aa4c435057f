import type { AnyToolDefinition } from '../tools/define-tool.js';

/**
 * A tool module is an ES module exporting `tools`: an array of tool
 * definitions. Worker pools load tool modules by URL in each worker, so the
 * module must be importable there (no main-thread-only state at import).
 */
export async function loadToolModule(url: string): Promise<readonly AnyToolDefinition[]> {
  const module = (await import(url)) as { tools?: unknown };
  if (!Array.isArray(module.tools)) throw new TypeError(`Tool module ${url} must export \`tools\`, an array of tool definitions`);
  return module.tools as AnyToolDefinition[];
}
