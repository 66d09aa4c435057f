import { ToolcellError, ToolErrorType, errorMessage, isToolcellError } from '../../errors.js';
import { loadPolicyFile } from '../../policy/load-policy-file.js';
import { PolicyEngine } from '../../policy/policy-engine.js';
import type { PolicyRule } from '../../policy/policy-rule.js';
import type { TenantsFile } from './tenants-file.js';
import type { WorkBudget } from '../../contracts/work-budget.js';

/**
 * Per-tenant policy on a hosting server. A tenant's calls are judged by the
 * operator's engine (the runtime's: `~/.toolcell/policies`, `--policy`) with
 * the tenant's rules as a layer over it: the defaults' `policies` files, then
 * the tenant's own. Each layer decides with its own priorities and the
 * stricter verdict wins (PolicyEngine.layered), so:
 * - an operator `deny` (or `ask_user`, which is a denial where nobody can be
 *   asked) holds whatever a tenant file says, at any priority;
 * - a tenant file's `deny` holds for that tenant even where the operator allows;
 * - a tenant file's `allow` lets a call run only where the operator's rules say nothing.
 */

/**
 * Reads every policy file the tenants file names, each once, and returns
 * each tenant's rules (defaults' files first). A missing or bad file throws
 * `invalid_policy` naming the tenants file, the field and the policy file.
 */
export function loadTenantPolicies(tenantsFile: string, content: TenantsFile): Map<string, PolicyRule[]> {
  const read = new Map<string, PolicyRule[]>();
  const load = (field: string, files: readonly string[] | undefined): PolicyRule[] =>
    (files ?? []).flatMap((file) => {
      let rules = read.get(file);
      if (!rules) {
        try {
          rules = loadPolicyFile(file, { required: true, origin: 'user' });
        } catch (error) {
          const code = isToolcellError(error) ? error.code : ToolErrorType.INVALID_POLICY;
          throw new ToolcellError(code, `Tenants file ${tenantsFile}: ${field}: ${errorMessage(error)}`);
        }
        read.set(file, rules);
      }
      return rules;
    });
  const defaults = load('defaults.policies', content.defaults?.policies);
  const byTenant = new Map<string, PolicyRule[]>();
  for (const [name, entry] of Object.entries(content.tenants)) byTenant.set(name, [...defaults, ...load(`tenants.${name}.policies`, entry.policies)]);
  return byTenant;
}

/**
 * The engines of a server's tenants, made on first use and kept while the
 * tenant's rules are the same (a reload of the tenants file reads the files
 * again and makes new rule lists, hence new engines for new sessions).
 */
export class TenantPolicies {
  readonly #operator: PolicyEngine;
  readonly #budgetFor: ((tenant: string) => WorkBudget) | undefined;
  /** By tenant, then by rule list: a reload makes new lists, hence new engines for new sessions. */
  readonly #engines = new Map<string, WeakMap<readonly PolicyRule[], Promise<PolicyEngine>>>();

  /** `budgetFor`: what parsing a tenant's commands is charged to (its share of the server's CPU). */
  constructor(operator: PolicyEngine, budgetFor?: (tenant: string) => WorkBudget) {
    this.#operator = operator;
    this.#budgetFor = budgetFor;
  }

  engineFor(tenant: string, rules: readonly PolicyRule[]): Promise<PolicyEngine> {
    let engines = this.#engines.get(tenant);
    if (!engines) {
      engines = new WeakMap();
      this.#engines.set(tenant, engines);
    }
    let engine = engines.get(rules);
    if (!engine) {
      // Named in the tenant's terms: a denial shown to a tenant never names the operator's policy files.
      engine = PolicyEngine.forTenant(this.#operator, rules, this.#budgetFor ? { budget: this.#budgetFor(tenant) } : {});
      engines.set(rules, engine);
    }
    return engine;
  }

  /** A tenant that left this server: its engines go. */
  forget(tenant: string): void {
    this.#engines.delete(tenant);
  }
}
