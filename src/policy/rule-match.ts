import type { ApprovalMode } from '../contracts/approval-mode.js';
import { SHELL_TOOL_NAME } from '../contracts/tool-names.js';
import { hasCommandCondition, type PolicyRule } from './policy-rule.js';
import type { SimpleCommand } from './split-command.js';
import { globMatches } from './tool-name-glob.js';

/** What a rule is matched against: one tool call. */
export interface PolicyCall {
  toolName: string;
  args: unknown;
  /** The MCP server of an MCP tool (its `mcpName`). */
  mcpServer?: string;
  mode: ApprovalMode;
}

/** The arguments as JSON with object keys sorted at every level, so `argsPattern` does not depend on key order. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/**
 * Whether the rule applies to this call, leaving aside its command
 * conditions. In plan mode an `allow` applies only when the rule lists
 * `plan` in `modes`: plan stays read-only unless a rule says otherwise by name.
 */
export function matchesCall(rule: PolicyRule, call: PolicyCall, argsJson: () => string): boolean {
  if (rule.modes !== undefined && !rule.modes.includes(call.mode)) return false;
  if (call.mode === 'plan' && rule.decision === 'allow' && !rule.modes?.includes('plan')) return false;
  if (hasCommandCondition(rule) && call.toolName !== SHELL_TOOL_NAME) return false;
  if (rule.toolNames !== undefined && !rule.toolNames.some((pattern) => globMatches(pattern, call.toolName))) return false;
  if (rule.mcpNames !== undefined && (call.mcpServer === undefined || !rule.mcpNames.some((pattern) => globMatches(pattern, call.mcpServer!)))) return false;
  if (rule.argsPatterns !== undefined && !rule.argsPatterns.some((pattern) => pattern.test(argsJson()))) return false;
  return true;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * Whether a rule's prefix matches a simple command, word by word (`git
 * status` never matches `git statusx`). An `allow` needs certainty: every
 * word literal and equal, the command name exactly as written (a planted
 * `./git` is not `git`). A `deny` or `ask_user` takes possibility: a word
 * that is not literal (`$X`) may be anything, and the command name matches
 * by its last path part and its NFKC form too (`/bin/rm`, fullwidth `ｒｍ`).
 */
function prefixMatches(prefix: readonly string[], command: SimpleCommand, allow: boolean): boolean {
  if (command.words.length < prefix.length || prefix.length === 0) return false;
  return prefix.every((expected, i) => {
    const word = command.words[i]!;
    if (allow) return word.literal && word.text === expected;
    if (!word.literal) return true;
    if (word.text === expected) return true;
    if (i !== 0) return word.text.normalize('NFKC') === expected;
    const name = basename(word.text);
    return name === expected || name.normalize('NFKC') === expected;
  });
}

/** Whether the rule's command conditions (prefix and regex, both when both are given) match one simple command. */
export function matchesCommand(rule: PolicyRule, command: SimpleCommand): boolean {
  const allow = rule.decision === 'allow';
  if (rule.commandPrefixes !== undefined && !rule.commandPrefixes.some((prefix) => prefixMatches(prefix, command, allow))) return false;
  if (rule.commandRegexes !== undefined && !rule.commandRegexes.some((regex) => regex.test(command.text))) return false;
  return true;
}
