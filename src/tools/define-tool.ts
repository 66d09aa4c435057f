import { z } from 'zod';
import { functionOption, parseOptions } from '../contracts/parse-options.js';
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

/** Checks a ToolDefinition (the interface above says what each field does). */
const toolDefinitionSchema = z.strictObject({
  name: z.string(),
  displayName: z.string().optional(),
  description: z.string().min(1),
  kind: z.enum(TOOL_KINDS, { error: `must be one of ${TOOL_KINDS.join(', ')}` }),
  parameters: z.instanceof(z.ZodType, { error: 'must be a zod schema' }),
  canUpdateOutput: z.boolean().optional(),
  isOutputMarkdown: z.boolean().optional(),
  describe: functionOption<unknown>().optional(),
  locations: functionOption<unknown>().optional(),
  confirm: functionOption<unknown>().optional(),
  execute: functionOption<unknown>(),
  modifiable: z.custom<unknown>((value) => typeof value === 'object' && value !== null, { error: 'must be an object' }).optional(),
});

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
  const name = typeof (definition as Partial<ToolDefinition> | null)?.name === 'string' ? definition.name : undefined;
  parseOptions(toolDefinitionSchema, definition, name === undefined ? 'defineTool' : `defineTool(${name})`);
  assertGeminiFunctionName(definition.name);
  const parameters = definition.parameters instanceof z.ZodObject ? definition.parameters.strict() : definition.parameters;
  return Object.freeze({ ...definition, parameters: parameters as unknown as TSchema });
}
