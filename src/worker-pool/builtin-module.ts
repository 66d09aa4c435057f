import { builtinToolDefinitions } from '../tools/builtin/catalog.js';

/** The built-in tools as a tool module (see tool-module.ts), which every worker pool loads. */
export const tools = builtinToolDefinitions;

/** URL of this module, for worker pools. */
export const builtinToolModuleUrl: string = import.meta.url;
