import type { AnyToolDefinition } from '../define-tool.js';
import { globTool } from './glob.js';
import { grepSearchTool, searchFileContentTool } from './grep-search.js';
import { listDirectoryTool } from './list-directory.js';
import { readFileTool } from './read-file.js';
import { readManyFilesTool } from './read-many-files.js';
import { replaceTool } from './replace.js';
import { saveMemoryTool } from './save-memory.js';
import { writeFileTool } from './write-file.js';

/**
 * Every built-in tool definition. Imported on the main thread (for names and
 * schemas) and in the worker (to execute), so these modules must not start
 * anything at import time.
 */
export const builtinToolDefinitions: readonly AnyToolDefinition[] = [
  listDirectoryTool,
  readFileTool,
  writeFileTool,
  replaceTool,
  globTool,
  grepSearchTool,
  searchFileContentTool,
  readManyFilesTool,
  saveMemoryTool,
];
