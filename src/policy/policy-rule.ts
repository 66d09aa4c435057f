import { z } from 'zod';
import { APPROVAL_MODES, type ApprovalMode } from '../contracts/approval-mode.js';
import { SHELL_TOOL_NAME } from '../contracts/tool-names.js';
import { globMatches } from './tool-name-glob.js';

/** What a rule decides. At equal priority `deny` beats `ask_user` beats `allow`. */
export type PolicyDecision = 'allow' | 'deny' | 'ask_user';

export const POLICY_DECISIONS: readonly PolicyDecision[] = ['allow', 'deny', 'ask_user'];

/** How strongly a decision wins a tie of priorities. */
export const DECISION_STRENGTH: Readonly<Record<PolicyDecision, number>> = { allow: 0, ask_user: 1, deny: 2 };

const stringOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

const regexOrList = z.union([
  z.string().min(1).refine(compiles, { error: 'must be a valid regular expression' }),
  z.array(z.string().min(1).refine(compiles, { error: 'must be a valid regular expression' })).min(1),
]);

/**
 * One `[[rule]]` table, in Gemini CLI's policy file shape so its users'
 * files carry over. Unknown keys are refused: a misspelt `comandPrefix`
 * would otherwise silently widen a rule to every command. Gemini CLI's
 * snake_case `allow_redirection` and `deny_message` are accepted too.
 */
export const policyRuleSchema = z
  .strictObject({
    /** A name for messages (`policy_denied` names the rule by it, besides its file and index). */
    name: z.string().min(1).optional(),
    /** Tool name(s); `*` and `?` are wildcards (`mcp_github_*`). Absent: every tool (or the shell tool, with a command condition). */
    toolName: stringOrList.optional(),
    /** MCP server name(s): the rule applies to that server's tools. */
    mcpName: stringOrList.optional(),
    /** A regular expression over the call's arguments as JSON with sorted keys. */
    argsPattern: regexOrList.optional(),
    /** Shell commands: matched against the words of every simple command, on word boundaries. */
    commandPrefix: stringOrList.optional(),
    /** Shell commands: a regular expression over each simple command's canonical text (words and redirections). */
    commandRegex: regexOrList.optional(),
    decision: z.enum(POLICY_DECISIONS as [PolicyDecision, ...PolicyDecision[]], { error: 'must be allow, deny or ask_user' }),
    /** Higher wins. Default 0. */
    priority: z.number().finite({ error: 'must be a finite number' }).default(0),
    /** Approval modes the rule applies in. Absent: all. */
    modes: z.array(z.enum(APPROVAL_MODES as [ApprovalMode, ...ApprovalMode[]], { error: 'must be default, autoEdit, yolo or plan' })).optional(),
    /** An allow by command lets output redirections and environment assignments through too. */
    allowRedirection: z.boolean().optional(),
    allow_redirection: z.boolean().optional(),
    /** Said to the model with a denial. */
    denyMessage: z.string().optional(),
    deny_message: z.string().optional(),
  })
  .refine((rule) => rule.toolName !== undefined || rule.mcpName !== undefined || rule.commandPrefix !== undefined || rule.commandRegex !== undefined, {
    error: 'must name toolName, mcpName, commandPrefix or commandRegex (a rule for every tool must say toolName = "*")',
  })
  .superRefine((rule, ctx) => {
    // A shell-only condition on a rule for other tools would never match: the rule would silently do nothing.
    const field = SHELL_ONLY_FIELDS.find((name) => rule[name] !== undefined);
    if (field === undefined) return;
    const tools = rule.toolName === undefined ? undefined : Array.isArray(rule.toolName) ? rule.toolName : [rule.toolName];
    if (rule.mcpName !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message: `must not be set on a rule with mcpName: it applies only to ${SHELL_TOOL_NAME}, which is no MCP tool`,
      });
    else if (tools !== undefined && !tools.some((pattern) => globMatches(pattern, SHELL_TOOL_NAME)))
      ctx.addIssue({ code: 'custom', path: [field], message: `must not be set on a rule for ${tools.join(', ')}: it applies only to ${SHELL_TOOL_NAME}` });
  });

/** Fields that only mean something for shell commands. */
const SHELL_ONLY_FIELDS = ['commandPrefix', 'commandRegex', 'allowRedirection', 'allow_redirection'] as const;

/** A rule as written in a file or passed to `createRuntime({ policy })`. */
export type PolicyRuleInput = z.input<typeof policyRuleSchema>;

/** Where a rule came from, for messages: `~/.toolcell/policies/git.toml` rule 3 (`no-force-push`). */
export interface PolicyRuleSource {
  /** A file path, or `options` for rules passed in code. */
  file: string;
  /** 1-based position among the file's `[[rule]]` tables. */
  index: number;
  name?: string;
  /** Set where the reader must not see the file's path (a hosting tenant): how the rule's file is named instead, also in `file`. */
  shownAs?: string;
}

/** A checked rule, normalised: lists everywhere, compiled expressions, prefixes split into words. */
export interface PolicyRule {
  readonly source: PolicyRuleSource;
  readonly decision: PolicyDecision;
  readonly priority: number;
  readonly toolNames?: readonly string[];
  readonly mcpNames?: readonly string[];
  readonly argsPatterns?: readonly RegExp[];
  readonly commandPrefixes?: readonly (readonly string[])[];
  readonly commandRegexes?: readonly RegExp[];
  readonly modes?: readonly ApprovalMode[];
  readonly allowRedirection: boolean;
  readonly denyMessage?: string;
}

const list = <T>(value: T | T[] | undefined): T[] | undefined => (value === undefined ? undefined : Array.isArray(value) ? value : [value]);

/** Splits a prefix into words the way the parsed command is split (whitespace; no quoting in prefixes). */
export function prefixWords(prefix: string): string[] {
  return prefix.trim().split(/\s+/u).filter(Boolean);
}

/** Turns a checked rule into its normalised form. */
export function normaliseRule(rule: z.output<typeof policyRuleSchema>, source: PolicyRuleSource): PolicyRule {
  const denyMessage = rule.denyMessage ?? rule.deny_message;
  return {
    source: rule.name !== undefined ? { ...source, name: rule.name } : source,
    decision: rule.decision,
    priority: rule.priority,
    ...(rule.toolName !== undefined ? { toolNames: list(rule.toolName)! } : {}),
    ...(rule.mcpName !== undefined ? { mcpNames: list(rule.mcpName)! } : {}),
    ...(rule.argsPattern !== undefined ? { argsPatterns: list(rule.argsPattern)!.map((p) => new RegExp(p, 'u')) } : {}),
    ...(rule.commandPrefix !== undefined ? { commandPrefixes: list(rule.commandPrefix)!.map(prefixWords) } : {}),
    ...(rule.commandRegex !== undefined ? { commandRegexes: list(rule.commandRegex)!.map((p) => new RegExp(p, 'u')) } : {}),
    ...(rule.modes !== undefined ? { modes: rule.modes } : {}),
    allowRedirection: rule.allowRedirection ?? rule.allow_redirection ?? false,
    ...(denyMessage !== undefined ? { denyMessage } : {}),
  };
}

/** True when the rule says something about shell commands' content. */
export function hasCommandCondition(rule: PolicyRule): boolean {
  return rule.commandPrefixes !== undefined || rule.commandRegexes !== undefined;
}

/** `~/.toolcell/policies/git.toml rule 3 ("no-force-push")`; `the operator's policy, rule 3 ("no-force-push")`. */
export function describeRuleSource(source: PolicyRuleSource): string {
  const name = source.name !== undefined ? ` (${JSON.stringify(source.name)})` : '';
  return source.shownAs !== undefined ? `${source.shownAs}, rule ${source.index}${name}` : `${source.file} rule ${source.index}${name}`;
}
