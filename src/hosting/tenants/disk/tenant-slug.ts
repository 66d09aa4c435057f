import { createHash } from 'node:crypto';

/** What every slug matches: safe as one path component and as a mount point name. */
export const TENANT_SLUG = /^[a-z0-9][a-z0-9-]{0,60}$/;

/**
 * The name a tenant's files go by on the host (its disk image, its workspace
 * folder): the tenant name folded to `[a-z0-9-]`, at most 40 characters,
 * then the first 16 hex digits of the name's SHA-256. Whatever the tenant is
 * called (`../../etc`, `/`, a newline, 10,000 characters), the slug is one
 * plain path component, and two names that fold alike (`Acme`, `acme`,
 * `a/cme`) still get different slugs.
 */
export function tenantSlug(tenant: string): string {
  if (typeof tenant !== 'string' || tenant.length === 0) throw new TypeError('tenantSlug: tenant must be a non-empty string');
  const readable = tenant
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  const digest = createHash('sha256').update(tenant, 'utf8').digest('hex').slice(0, 16);
  return readable.length > 0 ? `${readable}-${digest}` : `t-${digest}`;
}
