/**
 * Host variables every stdio MCP server gets: enough to find programs and
 * format text, nothing that usually holds a secret. Anything else must be
 * named in the server's `env` setting.
 */
export const BASE_ENVIRONMENT_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'TMPDIR',
  'TZ',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
];

/**
 * The environment of a stdio MCP server: the basics above from `hostEnv`,
 * then the server's `env` setting, whose values may name host variables as
 * `$NAME` or `${NAME}` (a missing one becomes empty): that is the only way a
 * host secret reaches a server.
 */
export function serverEnvironment(settingsEnv: Record<string, string> | undefined, hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BASE_ENVIRONMENT_NAMES) {
    const value = hostEnv[name];
    // Exported shell functions (`() { …`) are skipped: they are code, not data.
    if (value !== undefined && !value.startsWith('()')) env[name] = value;
  }
  for (const [name, value] of Object.entries(settingsEnv ?? {})) env[name] = expandVariables(value, hostEnv);
  return env;
}

/** Replaces `$NAME` and `${NAME}` with host variables (empty when unset); `$$` is a literal `$`. */
export function expandVariables(value: string, hostEnv: NodeJS.ProcessEnv = process.env): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, braced: string | undefined, bare: string | undefined) => {
    if (match === '$$') return '$';
    return hostEnv[braced ?? bare ?? ''] ?? '';
  });
}
