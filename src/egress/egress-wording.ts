/**
 * How egress refusals name the allow list and say that there is none, in
 * the terms of whoever reads them. A local user keeps the list in settings
 * (`sandbox.network.allow`) and can edit it; a hosting tenant's list lives
 * in the operator's tenants file, which the tenant never sees, so "not in
 * sandbox.network.allow" would send it looking for a setting it does not
 * have. The gate, the proxy and web_fetch take the wording from their caller.
 */
export interface EgressWording {
  /** The list, as it ends "not in …": `sandbox.network.allow`. */
  list: string;
  /** Said when nothing may be reached at all: that there is no network, and how a host gets allowed. */
  none: string;
}

/** The local CLI's and library's wording: the list is the user's `sandbox.network.allow` setting. */
export const SETTINGS_WORDING: Readonly<EgressWording> = Object.freeze({
  list: 'sandbox.network.allow',
  none: 'The sandbox has no network (sandbox.network is "none"); hosts must be listed in sandbox.network.allow to be fetched.',
});
