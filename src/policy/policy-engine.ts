import { SHELL_TOOL_NAME } from '../contracts/tool-names.js';
import { alwaysAllowPrefixes } from './allowed-in-chat.js';
import { DECISION_STRENGTH, describeRuleSource, hasCommandCondition, type PolicyDecision, type PolicyRule, type PolicyRuleSource } from './policy-rule.js';
import { matchesCall, matchesCommand, stableJson, type PolicyCall } from './rule-match.js';
import type { SimpleCommand } from './split-command.js';
import { sharedSplitThread, type SplitThread } from './split-thread.js';
import { stricterVerdict } from './stricter-verdict.js';

export type { PolicyCall } from './rule-match.js';

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
  /** For a shell command: the simple command that decided (its canonical text). */
  command?: string;
}

const DEFAULT: PolicyVerdict = { decision: 'default', reason: 'no policy rule matches; the approval mode decides' };

/** A rule's source named by `label` instead of its file. */
function shownAs(source: PolicyRuleSource, label: string): PolicyRuleSource {
  return { file: label, index: source.index, ...(source.name !== undefined ? { name: source.name } : {}), shownAs: label };
}

function relabel(verdict: PolicyVerdict, label: string | undefined): PolicyVerdict {
  return label !== undefined && verdict.rule && verdict.rule.shownAs === undefined ? { ...verdict, rule: shownAs(verdict.rule, label) } : verdict;
}

function better(a: PolicyRule | undefined, b: PolicyRule): PolicyRule {
  if (!a) return b;
  if (b.priority !== a.priority) return b.priority > a.priority ? b : a;
  return DECISION_STRENGTH[b.decision] > DECISION_STRENGTH[a.decision] ? b : a;
}

function verdictOf(rule: PolicyRule, reason: string, command?: string): PolicyVerdict {
  return {
    decision: rule.decision,
    rule: rule.source,
    ...(rule.denyMessage !== undefined ? { denyMessage: rule.denyMessage } : {}),
    reason,
    ...(command !== undefined ? { command } : {}),
  };
}

/**
 * The policy engine: rules from policy files (and code), judged against
 * each call. The highest-priority matching rule wins; at equal priority
 * `deny` beats `ask_user` beats `allow`. For `run_shell_command` every
 * simple command of the line is judged on its own and the line is allowed
 * only if each of them is; one denied command denies the line. A command
 * that cannot be parsed with confidence is never allowed by a rule: it gets
 * `ask_user` (the scheduler refuses it where nobody can be asked).
 *
 * With no rules the engine always answers `default`, so toolcell behaves
 * exactly as its approval modes say.
 */
export class PolicyEngine {
  readonly #rules: PolicyRule[];
  readonly #splitter: SplitThread;
  /** The layer under this one (`layered`): its verdict is kept unless this one's is stricter. */
  #base: PolicyEngine | undefined;
  /** How rules are named to someone who must not see the operator's file paths (`forTenant`): this layer's, the base's. */
  #labels: { own: string; base: string } | undefined;

  private constructor(rules: readonly PolicyRule[], splitter: SplitThread) {
    this.#rules = [...rules];
    this.#splitter = splitter;
  }

  /**
   * An engine over checked rules (`loadPolicySources`, `checkRules`). Shell
   * commands are split in `options.splitter` (default: the process's shared
   * parse thread, started on first use).
   */
  static async create(rules: readonly PolicyRule[] = [], options: { splitter?: SplitThread } = {}): Promise<PolicyEngine> {
    return new PolicyEngine(rules, options.splitter ?? sharedSplitThread());
  }

  /**
   * An engine for a hosting tenant: `rules` judged as a layer of their own
   * over `base` (the operator's engine); the stricter verdict wins (see
   * stricterVerdict), so a tenant's file can deny more but never undo the
   * base's `deny` or `ask_user`. With no rules, `base` itself.
   */
  static async layered(base: PolicyEngine, rules: readonly PolicyRule[]): Promise<PolicyEngine> {
    if (rules.length === 0) return base;
    const engine = new PolicyEngine(rules, base.#splitter);
    engine.#base = base;
    return engine;
  }

  /**
   * A hosting tenant's engine: `layered(operator, rules)`, whose verdicts
   * name rules in the tenant's terms ("the operator's policy, rule 3
   * (\"no-rm\")", "your tenant policy, rule 1") and never by the operator's
   * file paths.
   */
  static async forTenant(operator: PolicyEngine, rules: readonly PolicyRule[]): Promise<PolicyEngine> {
    const engine = new PolicyEngine(rules, operator.#splitter);
    engine.#base = operator;
    engine.#labels = { own: 'your tenant policy', base: "the operator's policy" };
    return engine;
  }

  /** The rules, in source order (a layered engine's own rules). */
  get rules(): readonly PolicyRule[] {
    return this.#rules;
  }

  /** Adds rules (`allow always` in chat); they take part from the next call on. */
  async addRules(rules: readonly PolicyRule[]): Promise<void> {
    this.#rules.push(...rules);
  }

  /** The prefixes "allow always" would save for a shell command (see alwaysAllowPrefixes), or undefined. */
  async alwaysAllowPrefixes(command: string): Promise<string[] | undefined> {
    return alwaysAllowPrefixes(await this.#splitter.split(command));
  }

  /**
   * The verdict on one call. A shell command is split off the main thread
   * (in the parse thread, within its budget and size cap), once for every layer.
   */
  async decide(call: PolicyCall): Promise<PolicyVerdict> {
    let split: Promise<SimpleCommand[]> | undefined;
    const commands = (command: string) => (split ??= this.#splitter.split(command));
    return this.#decideLayers(call, commands);
  }

  async #decideLayers(call: PolicyCall, commands: (command: string) => Promise<SimpleCommand[]>): Promise<PolicyVerdict> {
    const own = relabel(await this.#decideOwn(call, commands), this.#labels?.own);
    if (!this.#base) return own;
    return stricterVerdict(relabel(await this.#base.#decideLayers(call, commands), this.#labels?.base), own);
  }

  async #decideOwn(call: PolicyCall, split: (command: string) => Promise<SimpleCommand[]>): Promise<PolicyVerdict> {
    if (this.#rules.length === 0) return DEFAULT;
    let json: string | undefined;
    const argsJson = () => (json ??= stableJson(call.args) ?? 'null');
    const applicable = this.#rules.filter((rule) => matchesCall(rule, call, argsJson));
    const command = call.toolName === SHELL_TOOL_NAME ? (call.args as { command?: unknown } | null)?.command : undefined;
    const commands = typeof command === 'string' && applicable.length > 0 ? await split(command) : [];
    const verdict =
      applicable.length === 0
        ? DEFAULT
        : commands.length === 0
          ? this.#decideWhole(applicable.filter((rule) => !hasCommandCondition(rule)))
          : this.#decideCommands(applicable, commands);
    if (verdict.decision !== 'default' || call.mode !== 'plan') return verdict;
    return this.#planReason(verdict, call, argsJson, typeof command === 'string' ? await split(command) : []);
  }

  /**
   * In plan mode an allow rule counts only when it lists "plan" in `modes`.
   * When such a rule would have allowed the call, say so instead of "no
   * policy rule matches": plan mode, not a missing rule, decides.
   */
  #planReason(verdict: PolicyVerdict, call: PolicyCall, argsJson: () => string, commands: readonly SimpleCommand[]): PolicyVerdict {
    const ignored = this.#rules.filter(
      (rule) => rule.decision === 'allow' && rule.modes === undefined && matchesCall(rule, { ...call, mode: 'default' }, argsJson),
    );
    const allowing = ignored.find(
      (rule) => !hasCommandCondition(rule) || (commands.length > 0 && commands.every((c) => c.uncertain === undefined && matchesCommand(rule, c))),
    );
    if (!allowing) return verdict;
    const source = this.#labels ? shownAs(allowing.source, this.#labels.own) : allowing.source;
    return {
      ...verdict,
      reason: `policy rule ${describeRuleSource(source)} allows this call outside plan mode; plan mode counts an allow rule only when its modes list "plan", so the approval mode decides`,
    };
  }

  #decideWhole(rules: readonly PolicyRule[]): PolicyVerdict {
    let best: PolicyRule | undefined;
    for (const rule of rules) best = better(best, rule);
    return best ? verdictOf(best, `policy rule says ${best.decision}`) : DEFAULT;
  }

  #decideCommands(rules: readonly PolicyRule[], commands: readonly SimpleCommand[]): PolicyVerdict {
    let ask: PolicyVerdict | undefined;
    let fallback: PolicyVerdict | undefined;
    let allow: PolicyVerdict | undefined;
    for (const command of commands) {
      const verdict = this.#decideCommand(rules, command);
      if (verdict.decision === 'deny') return verdict;
      if (verdict.decision === 'ask_user') ask ??= verdict;
      else if (verdict.decision === 'default') fallback ??= verdict;
      else allow ??= verdict;
    }
    return ask ?? fallback ?? allow!;
  }

  #decideCommand(rules: readonly PolicyRule[], command: SimpleCommand): PolicyVerdict {
    let best: PolicyRule | undefined;
    for (const rule of rules) if (!hasCommandCondition(rule) || matchesCommand(rule, command)) best = better(best, rule);
    const shown = command.text || '(unparsed part)';
    if (best?.decision === 'deny') return verdictOf(best, `policy rule denies \`${shown}\``, command.text);
    if (command.uncertain !== undefined) {
      // Only a policy that speaks about this tool makes the engine ask; without one the approval mode decides, as before.
      return best?.decision === 'ask_user'
        ? verdictOf(best, `\`${shown}\` needs confirmation: ${command.uncertain}`, command.text)
        : { decision: 'ask_user', reason: `cannot judge \`${shown}\` with confidence: ${command.uncertain}`, command: command.text };
    }
    if (!best) return { ...DEFAULT, command: command.text };
    if (best.decision === 'allow' && hasCommandCondition(best) && !best.allowRedirection) {
      const write = command.redirects.find((redirect) => redirect.writes);
      if (write)
        return verdictOf(
          { ...best, decision: 'ask_user' },
          `\`${shown}\` writes to ${write.target.text}; the rule that allows it does not set allowRedirection`,
          command.text,
        );
      if (command.assignments.length > 0)
        return verdictOf(
          { ...best, decision: 'ask_user' },
          `\`${shown}\` sets ${command.assignments.join(' ')}; the rule that allows it does not set allowRedirection`,
          command.text,
        );
    }
    return verdictOf(best, `policy rule says ${best.decision} for \`${shown}\``, command.text);
  }
}
