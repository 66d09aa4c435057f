/**
 * Where shell commands run: `docker` (a hardened container, refused when
 * Docker is unavailable), `none` (the host, only when named), or `auto`
 * (Docker when the engine answers, otherwise shell calls are refused).
 */
export type SandboxMode = 'docker' | 'none' | 'auto';
