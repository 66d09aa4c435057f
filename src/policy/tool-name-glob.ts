const globCache = new Map<string, RegExp>();

/** `mcp_github_*` → /^mcp_github_.*$/: `*` any run of characters, `?` one; nothing else is special. */
export function globMatches(pattern: string, value: string): boolean {
  let regex = globCache.get(pattern);
  if (!regex) {
    const body = pattern
      .replace(/[.+^${}()|[\]\\]/gu, '\\$&')
      .replace(/\*/gu, '.*')
      .replace(/\?/gu, '.');
    regex = new RegExp(`^${body}$`, 'su');
    globCache.set(pattern, regex);
  }
  return regex.test(value);
}
