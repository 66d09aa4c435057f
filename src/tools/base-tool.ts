import type { FunctionDeclaration } from '@google/genai';
import type { UpdateOutput } from '../contracts/live-output.js';
import type {
  JsonSchema,
  ModifiableToolSupport,
  Tool,
  ToolConfirmationDetails,
  ToolKind,
  ToolLocation,
  ToolResult,
  ToolSource,
  ValidationResult,
} from './tool.js';

/** What every tool declares about itself; the optional facts have the defaults Gemini CLI's tools have. */
export interface ToolFields<TParams> {
  name: string;
  /** Default: the name. */
  displayName?: string;
  description: string;
  kind: ToolKind;
  parametersJsonSchema: JsonSchema;
  /** Default false. */
  canUpdateOutput?: boolean;
  /** Default false. */
  isOutputMarkdown?: boolean;
  modifiable?: ModifiableToolSupport<TParams>;
  source?: ToolSource;
}

/**
 * The one implementation of the Tool contract's fields and declaration
 * (Gemini CLI's BaseDeclarativeTool): a tool says what it is once, in the
 * constructor, and implements only what differs: checking params,
 * describing a call, and running it. No confirmation and no locations
 * unless a tool says otherwise.
 */
export abstract class BaseTool<TParams> implements Tool<TParams> {
  readonly name: string;
  readonly displayName: string;
  readonly description: string;
  readonly kind: ToolKind;
  readonly parametersJsonSchema: JsonSchema;
  readonly canUpdateOutput: boolean;
  readonly isOutputMarkdown: boolean;
  readonly modifiable?: ModifiableToolSupport<TParams>;
  readonly source?: ToolSource;

  constructor(fields: ToolFields<TParams>) {
    this.name = fields.name;
    this.displayName = fields.displayName ?? fields.name;
    this.description = fields.description;
    this.kind = fields.kind;
    this.parametersJsonSchema = fields.parametersJsonSchema;
    this.canUpdateOutput = fields.canUpdateOutput ?? false;
    this.isOutputMarkdown = fields.isOutputMarkdown ?? false;
    if (fields.modifiable) this.modifiable = fields.modifiable;
    if (fields.source) this.source = fields.source;
  }

  declaration(): FunctionDeclaration {
    return { name: this.name, description: this.description, parametersJsonSchema: this.parametersJsonSchema };
  }

  abstract validateParams(raw: unknown): ValidationResult<TParams>;

  abstract describe(params: TParams): string;

  toolLocations(_params: TParams): ToolLocation[] {
    return [];
  }

  shouldConfirmExecute(_params: TParams, _signal: AbortSignal): Promise<ToolConfirmationDetails | false> {
    return Promise.resolve(false);
  }

  abstract execute(params: TParams, signal: AbortSignal, updateOutput?: UpdateOutput): Promise<ToolResult>;
}
