import type { ToolConfirmationDetails, ToolConfirmationOutcome } from '../tools/tool.js';
import { untilAborted } from '../until-aborted.js';
import type { ApprovalMemory } from './approval.js';
import type { CallTable } from './call-table.js';
import type { WaitingToolCall } from './tool-call.js';

/** What a confirmation handler is asked about. */
export interface ConfirmationRequest {
  callId: string;
  toolName: string;
  params: unknown;
  /** One line describing the call, from the tool. */
  description: string;
  details: ToolConfirmationDetails;
}

/**
 * Asks the user about one call and resolves with their answer. `signal`
 * aborts when the batch is cancelled; the handler should then stop asking.
 */
export type ConfirmationHandler = (request: ConfirmationRequest, signal: AbortSignal) => Promise<{ outcome: ToolConfirmationOutcome }>;

/**
 * Lets the user edit a proposed file content (e.g. in $EDITOR). Resolves with
 * the edited content, or null when the user gave up (nothing changes then).
 */
export type ExternalEditor = (input: { filePath: string; originalContent: string; proposedContent: string; signal: AbortSignal }) => Promise<string | null>;

/**
 * Runs the confirmation dialogue of one waiting call until it is scheduled
 * (`proceed`), the user cancels (`cancel`, which cancels the rest of the
 * batch), or the batch is aborted (`aborted`). `modify_with_editor` replaces
 * the proposal with the user's edit, recomputes the diff and asks again.
 */
export async function confirmWithUser(input: {
  call: WaitingToolCall;
  signal: AbortSignal;
  table: CallTable;
  handler: ConfirmationHandler;
  editor: ExternalEditor | undefined;
  memory: ApprovalMemory;
  /** Saves "allow always" of a shell command as policy rules (the prefixes its details show). */
  saveAlwaysAllowed?: (prefixes: string[]) => Promise<void>;
}): Promise<'proceed' | 'cancel' | 'aborted'> {
  const { signal, table, handler, editor, memory } = input;
  let current = input.call;
  let modified = false;
  const schedule = (decision: WaitingToolCall['decision'], outcome?: ToolConfirmationOutcome): 'proceed' => {
    const { confirmationDetails: _details, ...rest } = current;
    table.set({ ...rest, status: 'scheduled', ...(decision ? { decision } : {}), ...(outcome ? { outcome } : {}) });
    return 'proceed';
  };

  if (memory.isApproved(current.tool.name, current.confirmationDetails)) return schedule('accept_always');

  for (;;) {
    const details = current.confirmationDetails;
    const answer = await untilAborted(
      handler(
        { callId: current.request.callId, toolName: current.request.name, params: current.params, description: current.tool.describe(current.params), details },
        signal,
      ),
      signal,
    );
    if (answer === undefined) return 'aborted';
    const { outcome } = answer;
    if (outcome === 'cancel') return 'cancel';
    if (outcome !== 'modify_with_editor') {
      memory.remember(current.tool.name, details, outcome);
      if (outcome === 'proceed_always' && details.type === 'exec' && details.alwaysAllow && input.saveAlwaysAllowed) {
        // The session memory already holds the answer; a file that cannot be written costs only its persistence.
        await input.saveAlwaysAllowed(details.alwaysAllow.prefixes).catch(() => {});
      }
      return schedule(modified ? 'modify' : outcome === 'proceed_once' ? 'accept' : 'accept_always', outcome);
    }
    if (!editor || details.type !== 'edit' || !current.tool.modifiable) continue;

    table.set({ ...current, confirmationDetails: { ...details, isModifying: true } });
    const originalContent = details.originalContent ?? '';
    const edited = await untilAborted(editor({ filePath: details.filePath, originalContent, proposedContent: details.newContent, signal }), signal);
    if (signal.aborted) return 'aborted';
    table.set(current);
    if (edited === undefined || edited === null) continue;

    const params = current.tool.modifiable.createUpdatedParams({ originalContent, modifiedContent: edited, params: current.params });
    const validation = current.tool.validateParams(params);
    if (!validation.ok) continue;
    const nextDetails = await current.tool.shouldConfirmExecute(validation.params, signal);
    modified = true;
    current = { ...current, params: validation.params, request: { ...current.request, args: validation.params as Record<string, unknown> } };
    if (!nextDetails) return schedule('modify', 'modify_with_editor');
    current = { ...current, confirmationDetails: nextDetails };
    table.set(current);
  }
}
