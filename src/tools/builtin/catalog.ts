import type { AnyToolDefinition } from '../define-tool.js';

/**
 * Every built-in tool definition. Imported on the main thread (for names and
 * schemas) and in the worker (to execute), so these modules must not start
 * anything at import time.
 */
export const builtinToolDefinitions: readonly AnyToolDefinition[] = [];
