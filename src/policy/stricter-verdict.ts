import type { PolicyDecision } from './policy-rule.js';

/** How restrictive a verdict is: `default` (no rule spoke) < `allow` < `ask_user` < `deny`. */
const RESTRICTION: Readonly<Record<PolicyDecision | 'default', number>> = { default: 0, allow: 1, ask_user: 2, deny: 3 };

/**
 * The stricter of two layers' verdicts on one call: a base layer (the
 * operator's rules) and a layer over it (a hosting tenant's). Each layer is
 * judged on its own, with its own priorities, so no priority in the upper
 * layer can outrank the base's `deny` or `ask_user`; the upper layer's
 * `allow` counts only where the base said nothing. At equal strictness the
 * base's verdict is kept (its rule is named).
 */
export function stricterVerdict<Verdict extends { decision: PolicyDecision | 'default' }>(base: Verdict, upper: Verdict): Verdict {
  return RESTRICTION[upper.decision] > RESTRICTION[base.decision] ? upper : base;
}
