import { sandboxRuntimeSchema } from '../../contracts/sandbox-runtime.js';

/**
 * The tenants file's `runtime` field (per tenant and in `defaults`): the OCI
 * runtime of the tenant's sandbox containers, e.g. `runsc` for gVisor. One
 * server runs each tenant on its own: a session's container gets its
 * tenant's runtime (`SessionLimits.runtime`). Without one, the operator's
 * (`serve --runtime`, else settings' `sandbox.runtime`, else the engine's
 * default) applies. A runtime the engine does not have refuses the
 * tenant's sessions with one line saying how to set it up.
 */
export const tenantRuntimeSchema = sandboxRuntimeSchema;

/** The runtime a tenant's sessions ask for: its own, else the defaults'; undefined: the operator's. */
export function resolveTenantRuntime(defaults: string | undefined, own: string | undefined): string | undefined {
  return own ?? defaults;
}
