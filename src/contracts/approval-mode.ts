/**
 * - `default`: ask whenever a tool wants confirmation;
 * - `autoEdit`: file edits proceed without asking; commands, MCP and fetches still ask;
 * - `yolo`: nothing asks (a policy's `deny` and `ask_user` rules still hold);
 * - `plan`: read-only: only read/search/fetch tools run, everything else is refused
 *   (unless a policy `allow` rule names `plan` in its `modes`).
 */
export type ApprovalMode = 'default' | 'autoEdit' | 'yolo' | 'plan';

export const APPROVAL_MODES: readonly ApprovalMode[] = ['default', 'autoEdit', 'yolo', 'plan'];

export function isApprovalMode(value: unknown): value is ApprovalMode {
  return typeof value === 'string' && (APPROVAL_MODES as readonly string[]).includes(value);
}
