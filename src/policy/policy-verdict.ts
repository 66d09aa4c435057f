import { DECISION_STRENGTH, describeRuleSource, hasCommandCondition, type PolicyDecision, type PolicyRule, type PolicyRuleSource } from './policy-rule.js';
import { matchesCommand } from './rule-match.js';
import type { SimpleCommand } from './split-command.js';

/**
 * What the policy says about one call. `default` means no rule spoke: the
 * approval mode decides, exactly as without a policy.
 */
export interface PolicyVerdict {
  decision: PolicyDecision | 'default';
  /** The rule that decided; absent for `default` and for a command the engine could not judge. */
  rule?: PolicyRuleSource;
  /** The rule's `denyMessage`, for the model. */
  denyMessage?: string;
  /** One sentence on why, for people and the model. */
  reason: string;
  /** For a shell command: the simple command that decided (its canonical text, cut at 300 characters). */
  command?: string;
}

export const DEFAULT_VERDICT: PolicyVerdict = { decision: 'default', reason: 'no policy rule matches; the approval mode decides' };

/**
 * One layer of rules to judge a shell command by (an engine's own rules,
 * or the operator's under a tenant's): the rules that apply to the call,
 * and in plan mode the allow rules plan mode set aside.
 */
export interface LayerRequest {
  applicable: readonly PolicyRule[];
  planIgnored: readonly PolicyRule[];
  /** How this layer's rules are named to the reader (a hosting tenant), instead of by their files. */
  label?: string;
}

/** A rule's source named by `label` instead of its file. */
export function shownAs(source: PolicyRuleSource, label: string): PolicyRuleSource {
  return { file: label, index: source.index, ...(source.name !== undefined ? { name: source.name } : {}), shownAs: label };
}

function better(a: PolicyRule | undefined, b: PolicyRule): PolicyRule {
  if (!a) return b;
  if (b.priority !== a.priority) return b.priority > a.priority ? b : a;
  return DECISION_STRENGTH[b.decision] > DECISION_STRENGTH[a.decision] ? b : a;
}

/** A simple command as a verdict shows it: long ones cut, so a 128 KiB command never fills a message. */
function shown(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function verdictOf(rule: PolicyRule, reason: string, command?: string): PolicyVerdict {
  return {
    decision: rule.decision,
    rule: rule.source,
    ...(rule.denyMessage !== undefined ? { denyMessage: rule.denyMessage } : {}),
    reason,
    ...(command !== undefined ? { command: shown(command) } : {}),
  };
}

/** The verdict of rules without command conditions on a whole call. */
export function decideWhole(rules: readonly PolicyRule[]): PolicyVerdict {
  let best: PolicyRule | undefined;
  for (const rule of rules) if (!hasCommandCondition(rule)) best = better(best, rule);
  return best ? verdictOf(best, `policy rule says ${best.decision}`) : DEFAULT_VERDICT;
}

function decideCommand(rules: readonly PolicyRule[], command: SimpleCommand): PolicyVerdict {
  let best: PolicyRule | undefined;
  for (const rule of rules) if (!hasCommandCondition(rule) || matchesCommand(rule, command)) best = better(best, rule);
  const text = shown(command.text || '(unparsed part)');
  if (best?.decision === 'deny') return verdictOf(best, `policy rule denies \`${text}\``, command.text);
  if (command.uncertain !== undefined) {
    // Only a policy that speaks about this tool makes the engine ask; without one the approval mode decides, as before.
    return best?.decision === 'ask_user'
      ? verdictOf(best, `\`${text}\` needs confirmation: ${command.uncertain}`, command.text)
      : { decision: 'ask_user', reason: `cannot judge \`${text}\` with confidence: ${command.uncertain}`, command: shown(command.text) };
  }
  if (!best) return { ...DEFAULT_VERDICT, command: shown(command.text) };
  if (best.decision === 'allow' && hasCommandCondition(best) && !best.allowRedirection) {
    const write = command.redirects.find((redirect) => redirect.writes);
    if (write)
      return verdictOf(
        { ...best, decision: 'ask_user' },
        `\`${text}\` writes to ${write.target.text}; the rule that allows it does not set allowRedirection`,
        command.text,
      );
    if (command.assignments.length > 0)
      return verdictOf(
        { ...best, decision: 'ask_user' },
        `\`${text}\` sets ${command.assignments.join(' ')}; the rule that allows it does not set allowRedirection`,
        command.text,
      );
  }
  return verdictOf(best, `policy rule says ${best.decision} for \`${text}\``, command.text);
}

/** Every simple command judged on its own: one denied denies the line; the line is allowed only if each is. */
function decideCommands(rules: readonly PolicyRule[], commands: readonly SimpleCommand[]): PolicyVerdict {
  let ask: PolicyVerdict | undefined;
  let fallback: PolicyVerdict | undefined;
  let allow: PolicyVerdict | undefined;
  for (const command of commands) {
    const verdict = decideCommand(rules, command);
    if (verdict.decision === 'deny') return verdict;
    if (verdict.decision === 'ask_user') ask ??= verdict;
    else if (verdict.decision === 'default') fallback ??= verdict;
    else allow ??= verdict;
  }
  return ask ?? fallback ?? allow!;
}

/**
 * One layer's verdict on a shell command split into `commands`. In plan
 * mode, when an allow rule plan mode set aside would have allowed the
 * call, the reason says so instead of "no policy rule matches".
 */
export function judgeLayer(layer: LayerRequest, commands: readonly SimpleCommand[]): PolicyVerdict {
  const verdict =
    layer.applicable.length === 0 ? DEFAULT_VERDICT : commands.length === 0 ? decideWhole(layer.applicable) : decideCommands(layer.applicable, commands);
  if (verdict.decision !== 'default' || layer.planIgnored.length === 0) return verdict;
  const allowing = layer.planIgnored.find(
    (rule) => !hasCommandCondition(rule) || (commands.length > 0 && commands.every((c) => c.uncertain === undefined && matchesCommand(rule, c))),
  );
  if (!allowing) return verdict;
  const source = layer.label !== undefined ? shownAs(allowing.source, layer.label) : allowing.source;
  return {
    ...verdict,
    reason: `policy rule ${describeRuleSource(source)} allows this call outside plan mode; plan mode counts an allow rule only when its modes list "plan", so the approval mode decides`,
  };
}
