import { SHELL_TOOL_NAME } from '../contracts/tool-names.js';
import type { WorkBudget } from '../contracts/work-budget.js';
import type { PolicyRule } from './policy-rule.js';
import { judgeLayer, shownAs, type LayerRequest, type PolicyVerdict } from './policy-verdict.js';
import { matchesCall, stableJson, type PolicyCall } from './rule-match.js';
import { sharedCommandSplitter, type CommandSplitter } from './split-thread.js';
import { stricterVerdict } from './stricter-verdict.js';

export type { PolicyCall } from './rule-match.js';
export type { PolicyVerdict } from './policy-verdict.js';

function relabel(verdict: PolicyVerdict, label: string | undefined): PolicyVerdict {
  return label !== undefined && verdict.rule && verdict.rule.shownAs === undefined ? { ...verdict, rule: shownAs(verdict.rule, label) } : verdict;
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
  readonly #splitter: CommandSplitter;
  /** What parsing this engine's commands is charged to (a hosting tenant's share of the server's CPU). */
  #budget: WorkBudget | undefined;
  /** The layer under this one (`layered`): its verdict is kept unless this one's is stricter. */
  #base: PolicyEngine | undefined;
  /** How rules are named to someone who must not see the operator's file paths (`forTenant`): this layer's, the base's. */
  #labels: { own: string; base: string } | undefined;

  private constructor(rules: readonly PolicyRule[], splitter: CommandSplitter) {
    this.#rules = [...rules];
    this.#splitter = splitter;
  }

  /**
   * An engine over checked rules (`loadPolicySources`, `checkRules`). Shell
   * commands are split in `options.splitter` (default: the process's shared
   * parse threads, started on first use).
   */
  static async create(rules: readonly PolicyRule[] = [], options: { splitter?: CommandSplitter } = {}): Promise<PolicyEngine> {
    return new PolicyEngine(rules, options.splitter ?? sharedCommandSplitter());
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
   * file paths. With a `budget`, the parse threads' CPU time for the
   * tenant's commands is charged to it (and waits for it).
   */
  static async forTenant(operator: PolicyEngine, rules: readonly PolicyRule[], options: { budget?: WorkBudget } = {}): Promise<PolicyEngine> {
    const engine = new PolicyEngine(rules, operator.#splitter);
    engine.#base = operator;
    engine.#labels = { own: 'your tenant policy', base: "the operator's policy" };
    engine.#budget = options.budget;
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
    return this.#splitter.prefixes(command);
  }

  /** This engine, then the layers under it. */
  #stack(): PolicyEngine[] {
    const stack: PolicyEngine[] = [this];
    for (let base = this.#base; base; base = base.#base) stack.push(base);
    return stack;
  }

  /**
   * The verdict on one call. A shell command is split and judged off the
   * main thread (in the parse thread, within its budget and size cap),
   * once for every layer.
   */
  async decide(call: PolicyCall, options: { signal?: AbortSignal } = {}): Promise<PolicyVerdict> {
    let json: string | undefined;
    const argsJson = () => (json ??= stableJson(call.args) ?? 'null');
    const layers: Array<{ engine: PolicyEngine; request: LayerRequest }> = [];
    for (const engine of this.#stack()) {
      const applicable = engine.#rules.filter((rule) => matchesCall(rule, call, argsJson));
      // Plan mode counts an allow rule only when it lists plan: the others are kept to say why they did not count.
      const planIgnored =
        call.mode === 'plan'
          ? engine.#rules.filter((rule) => rule.decision === 'allow' && rule.modes === undefined && matchesCall(rule, { ...call, mode: 'default' }, argsJson))
          : [];
      const label = engine === this ? this.#labels?.own : (this.#labels?.base ?? engine.#labels?.own);
      layers.push({ engine, request: { applicable, planIgnored, ...(label !== undefined ? { label } : {}) } });
    }
    const command = call.toolName === SHELL_TOOL_NAME ? (call.args as { command?: unknown } | null)?.command : undefined;
    const needsCommands = typeof command === 'string' && layers.some(({ request }) => request.applicable.length > 0 || request.planIgnored.length > 0);
    const verdicts = needsCommands
      ? await this.#splitter.judge(
          command,
          layers.map(({ request }) => request),
          { ...(this.#budget ? { budget: this.#budget } : {}), ...(options.signal ? { signal: options.signal } : {}) },
        )
      : layers.map(({ request }) => judgeLayer(request, []));
    // The bottom layer first; each layer above is kept only where it is stricter (stricterVerdict).
    let verdict: PolicyVerdict | undefined;
    for (let i = layers.length - 1; i >= 0; i--) {
      const own = relabel(verdicts[i]!, layers[i]!.request.label);
      verdict = verdict === undefined ? own : stricterVerdict(verdict, own);
    }
    return verdict!;
  }
}
