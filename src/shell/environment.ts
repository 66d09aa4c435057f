import { SANDBOX_PATHS } from '../backends/docker/sandbox-paths.js';

/** The PATH of a Debian container (the sandbox image). */
const CONTAINER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** A name an environment variable may have (and `passEnv`/`env` may use). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ShellEnvironmentOptions {
  /** Where the command runs: host values are only meaningful on the host. */
  backend: 'host' | 'docker';
  /** The host's environment (values for the allowlist). */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** Host variables the user allowed by name, copied when set. */
  passEnv?: readonly string[];
  /** Values set explicitly for this command; they win over everything else. */
  extra?: Readonly<Record<string, string>>;
  cols: number;
  rows: number;
}

/**
 * The whole environment of a command: an allowlist, so no host secret
 * (tokens, keys, cloud credentials) reaches it unless the user names it.
 * Pagers are `cat` and git never prompts, so nothing waits for a person.
 * For Docker, PATH and HOME are the container's (HOME is its private tmpfs).
 */
export function buildShellEnvironment(options: ShellEnvironmentOptions): Record<string, string> {
  const { hostEnv } = options;
  const env: Record<string, string> = {};
  if (options.backend === 'host') {
    env.PATH = hostEnv.PATH ?? CONTAINER_PATH;
    if (hostEnv.HOME) env.HOME = hostEnv.HOME;
    if (hostEnv.USER) env.USER = hostEnv.USER;
    if (hostEnv.LOGNAME) env.LOGNAME = hostEnv.LOGNAME;
    env.LANG = hostEnv.LANG ?? 'C.UTF-8';
    if (hostEnv.LC_ALL) env.LC_ALL = hostEnv.LC_ALL;
  } else {
    env.PATH = CONTAINER_PATH;
    env.HOME = SANDBOX_PATHS.home;
    env.LANG = 'C.UTF-8';
  }
  Object.assign(env, {
    TERM: 'xterm-256color',
    COLUMNS: String(options.cols),
    LINES: String(options.rows),
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    // Tells scripts they run under an agent, like Gemini CLI's GEMINI_CLI=1.
    TOOLCELL: '1',
  });
  for (const name of options.passEnv ?? []) {
    assertEnvName(name, 'passEnv');
    const value = hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(options.extra ?? {})) {
    assertEnvName(name, 'env');
    if (typeof value !== 'string') throw new TypeError(`env.${name} must be a string`);
    if (value.includes('\0')) throw new TypeError(`env.${name} must not contain NUL characters`);
    env[name] = value;
  }
  return env;
}

/** Throws a TypeError naming `option` when `name` is not a valid variable name. */
export function assertEnvName(name: string, option: string): void {
  if (typeof name !== 'string' || !ENV_NAME.test(name)) {
    throw new TypeError(`${option}: ${JSON.stringify(name)} is not a valid environment variable name`);
  }
}
