import { homedir } from 'node:os';
import { APPROVAL_MODES, type ApprovalMode } from '../../scheduler/approval.js';
import type { Style } from '../style.js';

/** The next approval mode in the Shift+Tab cycle: default → autoEdit → yolo → plan → default. */
export function nextApprovalMode(mode: ApprovalMode): ApprovalMode {
  return APPROVAL_MODES[(APPROVAL_MODES.indexOf(mode) + 1) % APPROVAL_MODES.length]!;
}

/** What each mode means, in a few words. */
export const MODE_HINTS: Record<ApprovalMode, string> = {
  default: 'asks before edits, commands and MCP tools',
  autoEdit: 'file edits run without asking; the rest still asks',
  yolo: 'nothing asks: every call runs',
  plan: 'read-only: only read and search tools run',
};

export function paintMode(mode: ApprovalMode, style: Style): string {
  switch (mode) {
    case 'yolo':
      return style.red(style.bold(mode));
    case 'autoEdit':
      return style.green(style.bold(mode));
    case 'plan':
      return style.cyan(style.bold(mode));
    default:
      return style.bold(mode);
  }
}

/** The bottom line of the chat: the approval mode (always visible), the model and the workspace. */
export function statusLine(state: { mode: ApprovalMode; model: string; workspace: string; keys: boolean }, style: Style): string {
  const home = homedir();
  const workspace = state.workspace.startsWith(home) ? `~${state.workspace.slice(home.length)}` : state.workspace;
  const keys = state.keys ? style.dim(' (shift+tab)') : '';
  return `${style.dim('approval:')} ${paintMode(state.mode, style)}${keys} ${style.dim(`· ${state.model} · ${workspace}`)}`;
}
