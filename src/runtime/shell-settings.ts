import { homedir } from 'node:os';
import { join } from 'node:path';
import { sandboxAllowList, type Settings } from '../config/settings-schema.js';
import type { SandboxMode } from '../contracts/sandbox-mode.js';
import type { ShellServiceOptions } from '../shell/shell-service.js';

export type { SandboxMode };

/**
 * The sandbox a command uses: the `--sandbox` flag when it was given, else
 * settings' `sandbox.mode`, else `auto`. Settings may choose `docker` or
 * `auto` but never `none`: a repository's own `.toolcell/settings.json` must
 * not take commands out of the sandbox, so only a flag can (fail closed).
 */
export function resolveSandboxMode(fromFlag: SandboxMode | undefined, settings: Settings, onWarning: (message: string) => void): SandboxMode {
  if (fromFlag !== undefined) return fromFlag;
  const fromSettings = settings.sandbox.mode;
  if (fromSettings === 'none') {
    onWarning('settings ask for sandbox.mode "none", which only the --sandbox none flag can choose; commands run in the Docker sandbox (auto)');
    return 'auto';
  }
  return fromSettings ?? 'auto';
}

/** Where a local run appends every connection its sandbox's proxy and its web_fetch allowed or refused. */
export function localEgressLogFile(): string {
  return join(homedir(), '.toolcell', 'egress.log');
}

/** What a runtime adds to settings for its sandbox, beyond the settings file. */
export interface SandboxExtras {
  /** A trusted workspace's `.toolcell/sandbox.Dockerfile`, built FROM the image on first use (sandbox-dockerfile.ts). */
  dockerfile?: string | undefined;
  /** The CPUs every sandbox container may run on (`serve --sandbox-cpus`; the Docker backend's `cpuSet`). */
  cpuSet?: string | undefined;
  /**
   * Spare containers kept started per workspace (the Docker backend's
   * `warmPool`; default its own, 1). A runtime opens one session for its
   * workspace and replaces a dead container without the pool, so it passes 0:
   * a spare would cost every run a container start and removal and never be used.
   */
  warmPool?: number | undefined;
}

/**
 * ShellService options from settings (`shell.*`, `sandbox.image`, `sandbox.network`, `sandbox.runtime`). Without a
 * named image, the first sandboxed command builds this version's image when
 * it is missing (progress on stderr), as Gemini CLI pulls its sandbox image
 * on first use; a named image is the user's and must exist.
 */
export function shellServiceOptions(settings: Settings, extras: SandboxExtras = {}): ShellServiceOptions {
  const allow = sandboxAllowList(settings.sandbox);
  return {
    ...(settings.shell.liveUpdateIntervalMs !== undefined ? { liveUpdateIntervalMs: settings.shell.liveUpdateIntervalMs } : {}),
    ...(settings.shell.savedOutputMaxBytes !== undefined ? { savedOutputMaxBytes: settings.shell.savedOutputMaxBytes } : {}),
    docker: {
      ...(settings.sandbox.image !== undefined ? { image: settings.sandbox.image } : { buildIfMissing: true }),
      ...(settings.sandbox.runtime !== undefined ? { runtime: settings.sandbox.runtime } : {}),
      ...(extras.dockerfile !== undefined ? { dockerfile: extras.dockerfile, buildIfMissing: true } : {}),
      ...(extras.cpuSet !== undefined ? { cpuSet: extras.cpuSet } : {}),
      ...(extras.warmPool !== undefined ? { warmPool: extras.warmPool } : {}),
      ...(allow !== undefined ? { egress: { allow: [...allow], logFile: localEgressLogFile() } } : {}),
    },
  };
}
