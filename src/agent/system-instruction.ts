import type { ApprovalMode } from '../scheduler/approval.js';

/**
 * The short system instruction toolcell gives the model: where it works and
 * what its tool calls may meet (confirmation, denial), so it can explain a
 * refusal instead of retrying it.
 */
export function systemInstruction(options: { workspace: string; approvalMode: ApprovalMode; interactive: boolean }): string {
  const lines = [
    'You are a coding assistant working through toolcell, which runs your tool calls safely.',
    `The workspace is ${options.workspace}; file paths are relative to it (or absolute inside it). Nothing outside it can be read or written.`,
    'Shell commands run in a sandbox without network access unless the user chose otherwise.',
  ];
  if (options.interactive) {
    lines.push('Some calls ask the user for approval first; a declined call comes back cancelled: do not retry it, ask the user instead.');
  } else if (options.approvalMode !== 'yolo') {
    lines.push(
      'No one can approve calls in this session: calls that need approval come back with a confirmation_required error. Do not retry them; say what you would have done.',
    );
  }
  if (options.approvalMode === 'plan') lines.push('Plan mode: only read-only tools run. Propose changes instead of making them.');
  return lines.join('\n');
}
