import { z } from 'zod';
import { allowListEntriesSchema } from '../../egress/allow-list-schema.js';

/**
 * The tenants file's `policies` and `network` fields. Their shape is checked
 * here; the policy files themselves are read by the policy loader when the
 * store loads the tenants file (tenant-store.ts), so a bad file is refused
 * with `invalid_policy` naming it.
 */

/** Absolute paths of TOML policy files in the `[[rule]]` shape of `--policy`. */
export const tenantPoliciesSchema = z.array(z.string().refine((path) => path.startsWith('/'), { error: 'must hold absolute paths' })).max(64);

/** `"none"` (no network) or `{"allow": [...]}`: the entries of settings' `sandbox.network.allow`. */
export const tenantNetworkSchema = z.union(
  [
    z.literal('none'),
    z.strictObject({
      allow: allowListEntriesSchema((problem) => problem.replace(/^sandbox\.network\.allow: /, '')),
    }),
  ],
  { error: 'must be "none" or {"allow": [host, ...]}' },
);

export type TenantNetworkInput = z.infer<typeof tenantNetworkSchema>;

/** The allow list a tenant's `network` (else the defaults') names; undefined: no network. */
export function resolveTenantNetwork(defaults: TenantNetworkInput | undefined, own: TenantNetworkInput | undefined): readonly string[] | undefined {
  const network = own ?? defaults;
  return network === undefined || network === 'none' ? undefined : network.allow;
}
