import type { AnyToolDefinition, ToolContext, WorkspaceInfo } from './define-tool.js';
import { validateWithZod, zodToParametersJsonSchema } from './parameters.js';
import type { WorkBudget } from '../contracts/work-budget.js';
import { BaseTool } from './base-tool.js';
import type { Tool, ToolConfirmationDetails, ToolLocation, ToolResult, ToolSource, UpdateOutput, ValidationResult } from './tool.js';

/**
 * Runs a definition's `confirm` and `execute` somewhere: in this thread
 * (`inProcessRunner`) or in a worker pool (see exec/worker-pool).
 */
export interface ToolRunner {
  confirm(definition: AnyToolDefinition, params: unknown, options: RunOptions): Promise<ToolConfirmationDetails | false>;
  execute(definition: AnyToolDefinition, params: unknown, options: RunOptions & { updateOutput?: UpdateOutput }): Promise<ToolResult>;
}

/** Per-call facts a runner needs besides the definition and params. */
export interface RunOptions {
  signal: AbortSignal;
  workspace: WorkspaceInfo;
  /** Who the call is for (a hosting server's tenant): a shared runner gives each owner its fair share. */
  owner?: string;
  /** This call's time limit in ms, instead of the runner's own. */
  timeoutMs?: number;
  /** What the call's CPU time on a shared thread is charged to, and waits for (a hosting tenant's share). */
  budget?: WorkBudget;
}

/** What a DefinedTool passes with every call besides its workspace: the owner, time limit and budget of RunOptions. */
export type CallerOptions = Pick<RunOptions, 'owner' | 'timeoutMs' | 'budget'>;

/** A Tool made from a definition; where it executes is up to its runner. */
export class DefinedTool extends BaseTool<unknown> {
  readonly #definition: AnyToolDefinition;
  readonly #runner: ToolRunner;
  readonly #workspace: WorkspaceInfo;
  readonly #caller: CallerOptions;

  constructor(options: { definition: AnyToolDefinition; runner: ToolRunner; workspace: WorkspaceInfo; source?: ToolSource; caller?: CallerOptions }) {
    const { definition } = options;
    super({
      name: definition.name,
      ...(definition.displayName !== undefined ? { displayName: definition.displayName } : {}),
      description: definition.description,
      kind: definition.kind,
      parametersJsonSchema: zodToParametersJsonSchema(definition.parameters),
      canUpdateOutput: definition.canUpdateOutput ?? false,
      isOutputMarkdown: definition.isOutputMarkdown ?? false,
      ...(definition.modifiable ? { modifiable: definition.modifiable } : {}),
      source: options.source ?? { type: 'local' },
    });
    this.#definition = definition;
    this.#runner = options.runner;
    this.#workspace = options.workspace;
    this.#caller = options.caller ?? {};
  }

  validateParams(raw: unknown): ValidationResult<unknown> {
    return validateWithZod(this.#definition.parameters, raw);
  }

  describe(params: unknown): string {
    return this.#definition.describe?.(params) ?? `${this.displayName} ${JSON.stringify(params)}`;
  }

  override toolLocations(params: unknown): ToolLocation[] {
    return this.#definition.locations?.(params, this.#workspace) ?? [];
  }

  override shouldConfirmExecute(params: unknown, signal: AbortSignal): Promise<ToolConfirmationDetails | false> {
    if (!this.#definition.confirm) return Promise.resolve(false);
    return this.#runner.confirm(this.#definition, params, { ...this.#caller, signal, workspace: this.#workspace });
  }

  execute(params: unknown, signal: AbortSignal, updateOutput?: UpdateOutput): Promise<ToolResult> {
    return this.#runner.execute(this.#definition, params, { ...this.#caller, signal, workspace: this.#workspace, ...(updateOutput ? { updateOutput } : {}) });
  }
}

/** Runs definitions in the calling thread. For trusted, cheap tools and tests. */
export const inProcessRunner: ToolRunner = {
  async confirm(definition, params, { signal, workspace }) {
    return definition.confirm ? definition.confirm(params, { signal, workspace, updateOutput: () => {} } satisfies ToolContext) : false;
  },
  async execute(definition, params, { signal, workspace, updateOutput }) {
    return definition.execute(params, { signal, workspace, updateOutput: updateOutput ?? (() => {}) } satisfies ToolContext);
  },
};

/** A Tool that runs its definition in this thread. */
export function createLocalTool(definition: AnyToolDefinition, options: { workspace: WorkspaceInfo }): Tool<unknown> {
  return new DefinedTool({ definition, runner: inProcessRunner, workspace: options.workspace, source: { type: 'local' } });
}
