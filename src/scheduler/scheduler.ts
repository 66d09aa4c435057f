import type { Part } from '@google/genai';
import { setMaxListeners } from 'node:events';
import { type WorkspaceInfo, workspaceInfoOption } from '../contracts/workspace-info.js';
import { errorMessage, ToolcellError, ToolErrorType, type ErrorCode } from '../errors.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import type { TelemetrySink } from '../telemetry/events.js';
import type { LiveOutput, SavedOutput, Tool, ToolConfirmationDetails, ToolConfirmationOutcome, ToolExecuteContext, ToolResult } from '../tools/tool.js';
import { EDIT_KINDS } from '../tools/tool.js';
import { allowedByMode, ApprovalMemory, type ApprovalMode, approvedByMode } from './approval.js';
import { CallTable } from './call-table.js';
import { confirmWithUser, type ConfirmationHandler, type ExternalEditor } from './confirmation-flow.js';
import { convertToFunctionResponse, createCancelledResponse, createErrorResponse } from './function-response.js';
import { PathLocks } from './path-locks.js';
import { consultPolicy } from './policy-gate.js';
import { SHELL_TOOL_NAME } from '../contracts/tool-names.js';
import { z } from 'zod';
import { APPROVAL_MODES } from '../contracts/approval-mode.js';
import { functionOption, objectWithMethods, parseOptions } from '../contracts/parse-options.js';
import type { PolicyEngine } from '../policy/policy-engine.js';
import type { CompletedToolCall, ScheduledToolCall, ToolCall, ToolCallDecision, ToolCallRequest, ToolCallUpdate } from './tool-call.js';
import { isCompleted } from './tool-call.js';
import { DEFAULT_MAX_OUTPUT_CHARS, savedOutputPath, truncateForModel } from './truncate-output.js';
import { redactLiveOutput, redactToolResult, type Redact } from './redact-result.js';

export interface SchedulerOptions {
  registry: ToolRegistry;
  /** Default `default`. Changeable later with `setApprovalMode`. */
  approvalMode?: ApprovalMode;
  /**
   * Asks the user about one call. Absent means headless: a call that would
   * ask is denied with a `confirmation_required` error, never run.
   */
  confirm?: ConfirmationHandler;
  /** Every state change of any call, with the whole batch in request order. */
  onUpdate?: (calls: readonly ToolCall[]) => void;
  /** Live output of executing calls (throttled by the tool or executor). */
  onOutput?: (callId: string, output: LiveOutput) => void;
  /** Opens the user's editor for `modify_with_editor`. Without it that outcome is treated as a plain re-ask. */
  editor?: ExternalEditor;
  telemetry?: TelemetrySink;
  /**
   * Policy rules consulted before the approval mode: `deny` refuses in every
   * mode, `allow` runs without asking (also headless), `ask_user` asks. No
   * engine, or no rule matching, leaves the approval mode to decide.
   */
  policy?: PolicyEngine;
  /**
   * Where "allow always" of a shell command saves allow rules for its exact
   * prefixes (`toolcell chat`: ~/.toolcell/policies/allowed-in-chat.toml).
   * Absent, "allow always" lasts for the session.
   */
  alwaysAllow?: { file: string; save(prefixes: string[]): Promise<void> };
  /** Truncation of long outputs for the model; without `saveDir` and its `workspace` outputs are never cut. */
  output?: { maxChars?: number; saveDir?: string; workspace?: WorkspaceInfo };
  /**
   * Removes the sandbox's secrets from every tool's result, live output and
   * failure message before they reach the model, people, logs or a saved
   * output (SecretRedactor.redact).
   */
  redact?: Redact;
}

const approvalModeSchema = z.enum(APPROVAL_MODES, { error: 'must be default, autoEdit, yolo or plan' });

/** Checks SchedulerOptions (the interface above says what each does); the callbacks and objects by what they must have. */
const schedulerOptionsSchema = z.strictObject({
  registry: objectWithMethods<ToolRegistry>('get'),
  approvalMode: approvalModeSchema.default('default'),
  confirm: functionOption<ConfirmationHandler>().optional(),
  onUpdate: functionOption<NonNullable<SchedulerOptions['onUpdate']>>().optional(),
  onOutput: functionOption<NonNullable<SchedulerOptions['onOutput']>>().optional(),
  editor: functionOption<ExternalEditor>().optional(),
  telemetry: objectWithMethods<TelemetrySink>('record').optional(),
  policy: objectWithMethods<PolicyEngine>('decide', 'alwaysAllowPrefixes').optional(),
  alwaysAllow: z.strictObject({ file: z.string().min(1), save: functionOption<(prefixes: string[]) => Promise<void>>() }).optional(),
  output: z
    .strictObject({
      maxChars: z.number().int().min(1).optional(),
      saveDir: z.string().min(1).optional(),
      workspace: workspaceInfoOption.optional(),
    })
    .optional(),
  redact: functionOption<Redact>().optional(),
});

const CANCELLED_BY_USER = 'User cancelled tool execution.';

/**
 * Gemini CLI's CoreToolScheduler: validates each call of a batch, applies the
 * approval policy, asks for confirmation one call at a time, then runs every
 * scheduled call in parallel (edits of the same file in order) and turns each
 * result into FunctionResponse parts. One batch at a time.
 */
export class Scheduler {
  readonly #registry: ToolRegistry;
  readonly #options: SchedulerOptions;
  readonly #memory = new ApprovalMemory();
  readonly #locks = new PathLocks();
  readonly #table: CallTable;
  #approvalMode: ApprovalMode;
  #running = false;

  constructor(raw: SchedulerOptions) {
    const options = parseOptions(schedulerOptionsSchema, raw, 'Scheduler');
    this.#registry = options.registry;
    this.#options = options;
    this.#approvalMode = options.approvalMode;
    this.#table = new CallTable({ onUpdate: options.onUpdate, onComplete: (call) => this.#recordTelemetry(call) });
  }

  get approvalMode(): ApprovalMode {
    return this.#approvalMode;
  }

  setApprovalMode(mode: ApprovalMode): void {
    this.#approvalMode = parseOptions(z.strictObject({ approvalMode: approvalModeSchema }), { approvalMode: mode }, 'Scheduler.setApprovalMode').approvalMode;
  }

  /** True while a batch is being processed. */
  get isRunning(): boolean {
    return this.#running;
  }

  /**
   * Processes one batch to the end and returns every call, final, in request
   * order. Aborting `signal` cancels the batch in whatever state it is.
   */
  async schedule(requests: readonly ToolCallRequest[], signal: AbortSignal): Promise<CompletedToolCall[]> {
    if (this.#running) throw new ToolcellError(ToolErrorType.SCHEDULER_BUSY, 'Cannot schedule new tool calls while other tool calls are running.');
    const ids = new Set<string>();
    for (const request of requests) {
      if (ids.has(request.callId))
        throw new ToolcellError(ToolErrorType.DUPLICATE_CALL_ID, `Duplicate call id ${JSON.stringify(request.callId)} in one batch.`);
      ids.add(request.callId);
    }
    this.#running = true;
    try {
      // Every running call listens to the signal (a listener or two each). Batches of one or two
      // calls, the common case, listen to the caller's signal directly: a linked signal per batch
      // costs about a quarter of a no-op call's dispatch (bench/dispatch). Larger batches get an
      // internal signal without a listener limit, so hundreds of calls are not a listener leak
      // on the caller's signal.
      if (requests.length <= 2) return await this.#run(requests, signal);
      const batch = new AbortController();
      setMaxListeners(0, batch.signal);
      const forwardAbort = () => batch.abort(signal.reason);
      if (signal.aborted) forwardAbort();
      else signal.addEventListener('abort', forwardAbort, { once: true });
      try {
        return await this.#run(requests, batch.signal);
      } finally {
        signal.removeEventListener('abort', forwardAbort);
      }
    } finally {
      this.#running = false;
    }
  }

  async #run(requests: readonly ToolCallRequest[], signal: AbortSignal): Promise<CompletedToolCall[]> {
    this.#table.reset(requests.map((request) => this.#createCall(request)));
    await Promise.all(this.#table.all.filter((call) => call.status === 'validating').map((call) => this.#validate(call.request.callId, signal)));
    await this.#confirmWaitingCalls(signal);
    if (signal.aborted) this.#cancelRemaining('Tool call cancelled before execution.');
    const scheduled = this.#table.all.filter((call): call is ScheduledToolCall => call.status === 'scheduled');
    await Promise.all(scheduled.map((call) => this.#execute(call, signal)));
    return this.#table.all.filter(isCompleted);
  }

  #createCall(request: ToolCallRequest): ToolCallUpdate {
    const tool = this.#registry.get(request.name);
    const startTime = Date.now();
    if (!tool) {
      const error = { type: ToolErrorType.TOOL_NOT_REGISTERED, message: `Tool "${request.name}" not found in registry.` };
      return { status: 'error', request, startTime, decision: 'denied', response: createErrorResponse(request, error) };
    }
    return { status: 'validating', request, tool, startTime };
  }

  async #validate(callId: string, signal: AbortSignal): Promise<void> {
    const call = this.#table.get(callId);
    if (call.status !== 'validating') return;
    const { request, tool } = call;
    const validation = tool.validateParams(request.args);
    if (!validation.ok)
      return this.#fail(
        call,
        tool,
        validation.type ?? ToolErrorType.INVALID_TOOL_PARAMS,
        `Invalid parameters for ${request.name}: ${validation.error}`,
        'denied',
      );
    const params = validation.params;
    const gate = await consultPolicy(this.#options.policy, { tool, params, mode: this.#approvalMode, canAsk: this.#options.confirm !== undefined, signal });
    if (gate.kind === 'refuse') return this.#fail(call, tool, gate.code, gate.message, 'denied');
    if (gate.kind === 'allow') return void this.#table.set({ status: 'scheduled', request, tool, params, startTime: call.startTime, decision: 'auto' });
    if (!allowedByMode(this.#approvalMode, tool)) {
      return this.#fail(
        call,
        tool,
        ToolErrorType.POLICY_VIOLATION,
        `Tool "${request.name}" (${tool.kind}) is not allowed in plan mode, which only runs read-only tools.`,
        'denied',
      );
    }
    if (gate.kind === 'ask') return this.#askByPolicy(call, tool, params, gate.verdict.reason, signal);
    if (this.#approvalMode === 'yolo') return void this.#table.set({ status: 'scheduled', request, tool, params, startTime: call.startTime, decision: 'auto' });
    let details: ToolConfirmationDetails | false;
    try {
      details = await tool.shouldConfirmExecute(params, signal);
    } catch (error) {
      return this.#fail(call, tool, ToolErrorType.EXECUTION_FAILED, `Could not prepare ${request.name}: ${errorMessage(error)}`, 'denied');
    }
    if (details) details = await this.#withAlwaysAllow(tool, details);
    if (!details || approvedByMode(this.#approvalMode, tool, details) || this.#memory.isApproved(tool.name, details)) {
      return void this.#table.set({ status: 'scheduled', request, tool, params, startTime: call.startTime, decision: 'auto' });
    }
    if (!this.#options.confirm) {
      return this.#fail(
        call,
        tool,
        ToolErrorType.CONFIRMATION_REQUIRED,
        `Tool "${request.name}" needs confirmation (${details.title}), which cannot be asked in non-interactive mode; it was not run. Use an approval mode that allows it (autoEdit for file edits, yolo for everything).`,
        'denied',
      );
    }
    this.#table.set({ status: 'awaiting_approval', request, tool, params, confirmationDetails: details, startTime: call.startTime });
  }

  /** A policy `ask_user`: asks even where the approval mode would not (yolo, a tool that never asks). */
  async #askByPolicy(call: ToolCall, tool: Tool<unknown>, params: unknown, reason: string, signal: AbortSignal): Promise<void> {
    let details: ToolConfirmationDetails | false;
    try {
      details = await tool.shouldConfirmExecute(params, signal);
    } catch (error) {
      return this.#fail(call, tool, ToolErrorType.EXECUTION_FAILED, `Could not prepare ${call.request.name}: ${errorMessage(error)}`, 'denied');
    }
    const confirmationDetails: ToolConfirmationDetails = details
      ? await this.#withAlwaysAllow(tool, details)
      : { type: 'info', title: 'Confirm (policy)', prompt: `${tool.describe(params)}: ${reason}` };
    this.#table.set({ status: 'awaiting_approval', request: call.request, tool, params, confirmationDetails, startTime: call.startTime });
  }

  /** Adds to a shell command's details the prefixes "allow always" would save, when it saves any. */
  async #withAlwaysAllow(tool: Tool<unknown>, details: ToolConfirmationDetails): Promise<ToolConfirmationDetails> {
    const { alwaysAllow, policy, confirm } = this.#options;
    if (!alwaysAllow || !policy || !confirm || details.type !== 'exec' || tool.name !== SHELL_TOOL_NAME) return details;
    const prefixes = await policy.alwaysAllowPrefixes(details.command);
    return prefixes ? { ...details, alwaysAllow: { prefixes, file: alwaysAllow.file } } : details;
  }

  async #confirmWaitingCalls(signal: AbortSignal): Promise<void> {
    for (const call of this.#table.all) {
      if (call.status !== 'awaiting_approval') continue;
      if (signal.aborted) return;
      const outcome = await confirmWithUser({
        call,
        signal,
        table: this.#table,
        handler: this.#options.confirm!,
        editor: this.#options.editor,
        memory: this.#memory,
        ...(this.#options.alwaysAllow ? { saveAlwaysAllowed: this.#options.alwaysAllow.save } : {}),
      });
      if (outcome === 'cancel') {
        this.#cancelRemaining(CANCELLED_BY_USER, 'reject');
        return;
      }
    }
  }

  async #execute(scheduled: ScheduledToolCall, signal: AbortSignal): Promise<void> {
    const { request, tool, params } = scheduled;
    const release = EDIT_KINDS.has(tool.kind) ? await this.#locks.acquire(tool.toolLocations(params).map((l) => l.path)) : undefined;
    try {
      if (signal.aborted) return this.#cancel(scheduled, 'Tool call cancelled before execution.');
      if (!this.#table.set({ ...scheduled, status: 'executing' })) return;
      const onOutput = this.#options.onOutput;
      const redact = this.#options.redact;
      const updateOutput = tool.canUpdateOutput
        ? (raw: LiveOutput) => {
            const output = redact ? redactLiveOutput(raw, redact) : raw;
            this.#table.setLiveOutput(request.callId, output);
            onOutput?.(request.callId, output);
          }
        : undefined;
      let result: ToolResult;
      try {
        result = await tool.execute(params, signal, updateOutput, this.#executeContext(request.callId));
        if (redact) result = redactToolResult(result, redact);
      } catch (error) {
        if (signal.aborted) return this.#cancel(scheduled, CANCELLED_BY_USER);
        const message = `Tool "${request.name}" failed: ${errorMessage(error)}`;
        return this.#fail(scheduled, tool, ToolErrorType.EXECUTION_FAILED, redact ? redact(message) : message);
      }
      if (signal.aborted)
        return this.#cancel(scheduled, CANCELLED_BY_USER, textOf(await this.#limitOutput(request.callId, result.llmContent, result.savedOutput)));
      if (result.error) {
        const limited = { ...result, llmContent: await this.#limitOutput(request.callId, result.llmContent, result.savedOutput) };
        return this.#fail(scheduled, tool, result.error.type, result.error.message, undefined, limited);
      }
      const llmContent = await this.#limitOutput(request.callId, withModificationNote(scheduled, result.llmContent), result.savedOutput);
      this.#table.set({
        status: 'success',
        request,
        tool,
        startTime: scheduled.startTime,
        ...decisionOf(scheduled),
        response: {
          callId: request.callId,
          responseParts: convertToFunctionResponse(request.name, request.callId, llmContent),
          resultDisplay: result.returnDisplay,
          ...(result.displayLines !== undefined ? { displayLines: result.displayLines } : {}),
          ...(result.sandbox ? { sandbox: result.sandbox } : {}),
        },
      });
    } finally {
      release?.();
    }
  }

  /** Tells the tool where a long output goes, so that one that can stream it there as it arrives does. */
  #executeContext(callId: string): ToolExecuteContext {
    const saveDir = this.#options.output?.saveDir;
    if (!saveDir || !this.#options.output?.workspace) return { callId };
    return { callId, outputFile: { path: savedOutputPath(saveDir, callId), maxChars: this.#options.output?.maxChars ?? DEFAULT_MAX_OUTPUT_CHARS } };
  }

  async #limitOutput(callId: string, content: ToolResult['llmContent'], saved?: SavedOutput): Promise<ToolResult['llmContent']> {
    const { saveDir, workspace } = this.#options.output ?? {};
    if (!saveDir || !workspace || typeof content !== 'string') return content;
    const { text } = await truncateForModel(content, { callId, saveDir, workspace, maxChars: this.#options.output?.maxChars, ...(saved ? { saved } : {}) });
    return text;
  }

  #fail(call: ToolCall, tool: Tool<unknown>, type: ErrorCode, message: string, decision?: ToolCallDecision, result?: ToolResult): void {
    // A failed result may carry more for the model than its message (stdout, stderr, exit code); keep it.
    const details = result && typeof result.llmContent === 'string' && result.llmContent !== `Error: ${message}` ? result.llmContent : undefined;
    const response = createErrorResponse(call.request, { type, message }, details);
    if (result) response.resultDisplay = result.returnDisplay;
    if (result?.sandbox) response.sandbox = result.sandbox;
    this.#table.set({
      status: 'error',
      request: call.request,
      tool,
      startTime: call.startTime,
      ...decisionOf(call),
      ...(decision ? { decision } : {}),
      response,
    });
  }

  #cancel(call: ToolCall, reason: string, partialOutput?: string, decision?: ToolCallDecision): void {
    if (!('tool' in call) || !call.tool) return;
    const liveText = call.status === 'executing' && typeof call.liveOutput === 'string' ? call.liveOutput : undefined;
    this.#table.set({
      status: 'cancelled',
      request: call.request,
      tool: call.tool,
      startTime: call.startTime,
      ...decisionOf(call),
      ...(decision ? { decision } : {}),
      response: createCancelledResponse(call.request, reason, partialOutput ?? liveText),
    });
  }

  #cancelRemaining(reason: string, decision?: ToolCallDecision): void {
    for (const call of this.#table.all)
      if (!isCompleted(call)) this.#cancel(call, reason, undefined, call.status === 'awaiting_approval' ? decision : undefined);
  }

  #recordTelemetry(call: CompletedToolCall): void {
    const sink = this.#options.telemetry;
    if (!sink) return;
    try {
      sink.record({
        event: 'tool_call',
        timestamp: new Date().toISOString(),
        callId: call.request.callId,
        tool: call.request.name,
        durationMs: call.durationMs,
        ...(call.approvalWaitMs !== undefined ? { approvalWaitMs: call.approvalWaitMs } : {}),
        decision: call.decision ?? (call.status === 'cancelled' ? 'reject' : 'auto'),
        outcome: call.status,
        ...(call.response.error ? { errorType: call.response.error.type } : {}),
        ...(call.response.sandbox ? { sandbox: call.response.sandbox } : {}),
      });
    } catch {
      // Telemetry must never change a call's outcome.
    }
  }
}

function decisionOf(call: ToolCall): { decision?: ToolCallDecision; outcome?: ToolConfirmationOutcome } {
  return { ...(call.decision ? { decision: call.decision } : {}), ...(call.outcome ? { outcome: call.outcome } : {}) };
}

/** The model must know when what ran is not what it proposed (`modify_with_editor`). */
function withModificationNote(call: ToolCall, content: ToolResult['llmContent']): ToolResult['llmContent'] {
  if (call.decision !== 'modify') return content;
  const note =
    'Note: the user edited your proposed change before approving it, so what was applied differs from what you proposed. Read the file again if you need its exact content.';
  if (typeof content === 'string') return `${content}\n\n${note}`;
  return [...(Array.isArray(content) ? content : [content]), { text: note }];
}

function textOf(content: ToolResult['llmContent']): string | undefined {
  if (typeof content === 'string') return content;
  const parts = (Array.isArray(content) ? content : [content]) as Array<string | Part>;
  const text = parts.map((p) => (typeof p === 'string' ? p : (p.text ?? ''))).join('');
  return text || undefined;
}
