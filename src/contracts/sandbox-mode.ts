/**
 * Where shell commands run: `docker` (a hardened container, refused when
 * Docker is unavailable), `none` (the host, only when named), or `auto`
 * (Docker when the engine answers, otherwise shell calls are refused).
 */
export const SANDBOX_MODES = ['docker', 'none', 'auto'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];
