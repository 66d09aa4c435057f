import { ToolErrorType, type ErrorCode } from '../errors.js';
import type { ApprovalMode } from '../contracts/approval-mode.js';
import type { PolicyEngine, PolicyVerdict } from '../policy/policy-engine.js';
import { describeRuleSource } from '../policy/policy-rule.js';
import type { Tool } from '../tools/tool.js';

/** What the policy means for one call in the scheduler's terms. */
export type PolicyGate =
  | { kind: 'default' }
  | { kind: 'allow'; verdict: PolicyVerdict }
  | { kind: 'ask'; verdict: PolicyVerdict }
  | { kind: 'refuse'; code: ErrorCode; message: string };

/**
 * Consults the policy about a validated call. `deny` refuses in every
 * approval mode (yolo included) with `policy_denied`, naming the rule so the
 * model can try something else; `allow` runs without asking, also where
 * nobody can be asked; `ask_user` asks, and is refused with
 * `confirmation_required` when nobody can be asked.
 */
export async function consultPolicy(
  policy: PolicyEngine | undefined,
  input: { tool: Tool<unknown>; params: unknown; mode: ApprovalMode; canAsk: boolean; signal?: AbortSignal },
): Promise<PolicyGate> {
  if (!policy) return { kind: 'default' };
  const { tool, params, mode } = input;
  const verdict = await policy.decide(
    {
      toolName: tool.name,
      args: params,
      mode,
      ...(tool.source?.type === 'mcp' ? { mcpServer: tool.source.serverName } : {}),
    },
    input.signal ? { signal: input.signal } : {},
  );
  switch (verdict.decision) {
    case 'default':
      return { kind: 'default' };
    case 'allow':
      return { kind: 'allow', verdict };
    case 'deny':
      return { kind: 'refuse', code: ToolErrorType.POLICY_DENIED, message: denialMessage(tool.name, verdict) };
    case 'ask_user':
      if (input.canAsk) return { kind: 'ask', verdict };
      return {
        kind: 'refuse',
        code: ToolErrorType.CONFIRMATION_REQUIRED,
        message: `Tool "${tool.name}" needs confirmation by policy (${whose(verdict)}: ${verdict.reason}), which cannot be asked in non-interactive mode; it was not run.`,
      };
  }
}

function whose(verdict: PolicyVerdict): string {
  if (!verdict.rule) return 'the policy engine';
  return verdict.rule.shownAs !== undefined ? describeRuleSource(verdict.rule) : `rule ${describeRuleSource(verdict.rule)}`;
}

/** `Denied by policy rule /home/u/.toolcell/policies/git.toml rule 2 ("no-push"): …`. */
export function denialMessage(toolName: string, verdict: PolicyVerdict): string {
  const what = verdict.command ? `the command \`${verdict.command}\`` : `this call of ${toolName}`;
  const because = verdict.denyMessage ? ` ${verdict.denyMessage.trim()}` : '';
  return `Denied by policy ${whose(verdict)}, which refuses ${what}; it was not run.${because} Do not retry it in another form; find another way or ask the user.`;
}
