import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { TenantsFile } from './tenants-file.js';

/**
 * Where the tenants' workspaces must not meet: two tenants in one folder (or
 * one inside the other's) share files, and a tenant whose own workspace lies
 * in the server's data directory reaches the default workspaces of every
 * other tenant kept there (or, containing it, all of them and their disk
 * images). Compared after symlinks, both ways round, so no spelling of a
 * path gets past. The tenants file and the policy files that govern tenants
 * must not lie in any tenant's own workspace either: its commands could
 * rewrite them.
 */
export interface WorkspaceLayout {
  /** The server's data directory (`<data-dir>/tenants/<name>/workspace`, `workspaces/`, `disk-images/`). */
  dataDir?: string | undefined;
  /** The tenants file itself. */
  tenantsFile?: string | undefined;
  /** The tenant to name first when two meet (the one being added). */
  first?: string | undefined;
}

/**
 * The real path of `path`, which need not exist yet: its deepest existing
 * ancestor with every symlink resolved, and the rest appended as written.
 */
export async function realFolder(path: string): Promise<string> {
  const absolute = resolve(path);
  const rest: string[] = [];
  let at = absolute;
  for (;;) {
    try {
      return join(await realpath(at), ...rest.reverse());
    } catch {
      const parent = dirname(at);
      if (parent === at) return absolute;
      rest.push(basename(at));
      at = parent;
    }
  }
}

/** True when `inner` (absolute, normalised) is `outer` or lies inside it. */
export function isInside(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith(sep) ? outer : `${outer}${sep}`);
}

/** True when `a` and `b` (absolute, normalised) are one folder or one lies inside the other. */
export function overlaps(a: string, b: string): boolean {
  return isInside(a, b) || isInside(b, a);
}

/**
 * The first way `file`'s workspaces meet (see WorkspaceLayout), as
 * `tenants.<name>.workspace …`, or undefined when they are apart.
 */
export async function workspaceOverlap(file: Pick<TenantsFile, 'tenants' | 'defaults'>, layout: WorkspaceLayout = {}): Promise<string | undefined> {
  const own = await Promise.all(
    Object.entries(file.tenants)
      .filter(([, entry]) => entry.workspace !== undefined)
      .map(async ([name, entry]) => ({ name, written: entry.workspace!, real: await realFolder(entry.workspace!) })),
  );
  own.sort((a, b) => Number(b.name === layout.first) - Number(a.name === layout.first));
  const dataDir = layout.dataDir !== undefined ? await realFolder(layout.dataDir) : undefined;
  const governing = [
    ...(layout.tenantsFile !== undefined ? [{ what: 'the tenants file', path: layout.tenantsFile }] : []),
    ...(file.defaults?.policies ?? []).map((path) => ({ what: 'the policy file', path })),
    ...Object.values(file.tenants).flatMap((entry) => (entry.policies ?? []).map((path) => ({ what: 'the policy file', path }))),
  ];
  const files = await Promise.all(governing.map(async (item) => ({ ...item, real: await realFolder(item.path) })));
  for (const [index, tenant] of own.entries()) {
    // Both ways round for each pair: the message names the tenant checked first (layout.first) as the one that meets the other.
    const field = `tenants.${tenant.name}.workspace ${tenant.written}`;
    const via = (real: string, written: string) => (real === resolve(written) ? '' : ` (${real} after symlinks)`);
    if (dataDir !== undefined && overlaps(tenant.real, dataDir)) {
      const where = isInside(tenant.real, dataDir) ? 'lies in' : 'contains';
      return `${field}${via(tenant.real, tenant.written)} ${where} the server's data directory ${dataDir}, where the other tenants' workspaces are`;
    }
    for (const other of own.filter((_, at) => at !== index)) {
      if (overlaps(tenant.real, other.real)) {
        return `${field}${via(tenant.real, tenant.written)} overlaps tenant ${other.name}'s workspace ${other.written}${via(other.real, other.written)}: two tenants would share files`;
      }
    }
    const held = files.find((item) => isInside(item.real, tenant.real));
    if (held) return `${field}${via(tenant.real, tenant.written)} holds ${held.what} ${held.path}: the tenant's commands could rewrite it`;
  }
  return undefined;
}
