import { z } from 'zod';
import { assertGeminiFunctionName } from './names.js';
import type { ModifiableToolSupport, ToolConfirmationDetails, ToolKind, ToolLocation, ToolResult, UpdateOutput } from './tool.js';
import { TOOL_KINDS } from './tool.js';
import type { WorkspaceInfo } from '../contracts/workspace-info.js';

export type { WorkspaceInfo };

/** What a tool's functions get besides their params. */
export interface ToolContext {
  signal: AbortSignal;
  updateOutput: UpdateOutput;
  workspace: WorkspaceInfo;
}

/**
 * A tool written as data plus functions. The same definition serves the main
 * thread (name, schema, describe) and the place it executes (a worker thread
 * or the main thread), so a definition's module must be importable in both.
 */
export interface ToolDefinition<TSchema extends z.ZodType = z.ZodType> {
  name: string;
  displayName?: string;
  description: string;
  kind: ToolKind;
  /** Parameters as a zod schema; object schemas are made strict (unknown keys are an error). */
  parameters: TSchema;
  canUpdateOutput?: boolean;
  isOutputMarkdown?: boolean;
  describe?(params: z.output<TSchema>): string;
  locations?(params: z.output<TSchema>, workspace: WorkspaceInfo): ToolLocation[];
  /** Confirmation details, or false; runs where `execute` runs (it may read files). */
  confirm?(params: z.output<TSchema>, ctx: ToolContext): Promise<ToolConfirmationDetails | false>;
  execute(params: z.output<TSchema>, ctx: ToolContext): Promise<ToolResult>;
  modifiable?: ModifiableToolSupport<z.output<TSchema>>;
}

/** A definition whose params type is erased, as registries and worker catalogs hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDefinition = ToolDefinition<any>;

/**
 * Checks and freezes a tool definition. Throws `TypeError` naming the field
 * that is wrong, or `invalid_tool_name` for a name Gemini would reject.
 *
 * @example
 * const echo = defineTool({
 *   name: 'echo', description: 'Echoes text', kind: 'other',
 *   parameters: z.object({ text: z.string() }),
 *   async execute({ text }) { return { llmContent: text, returnDisplay: text }; },
 * });
 */
export function defineTool<TSchema extends z.ZodType>(definition: ToolDefinition<TSchema>): ToolDefinition<TSchema> {
  if (typeof definition !== 'object' || definition === null) throw new TypeError('defineTool: definition must be an object');
  if (typeof definition.name !== 'string') throw new TypeError('defineTool: name must be a string');
  assertGeminiFunctionName(definition.name);
  if (typeof definition.description !== 'string' || definition.description.length === 0) {
    throw new TypeError(`defineTool(${definition.name}): description must be a non-empty string`);
  }
  if (!TOOL_KINDS.includes(definition.kind)) {
    throw new TypeError(`defineTool(${definition.name}): kind must be one of ${TOOL_KINDS.join(', ')}`);
  }
  if (!(definition.parameters instanceof z.ZodType)) {
    throw new TypeError(`defineTool(${definition.name}): parameters must be a zod schema`);
  }
  if (typeof definition.execute !== 'function') {
    throw new TypeError(`defineTool(${definition.name}): execute must be a function`);
  }
  const parameters = definition.parameters instanceof z.ZodObject ? definition.parameters.strict() : definition.parameters;
  return Object.freeze({ ...definition, parameters: parameters as unknown as TSchema });
}
