import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { mayTighten } from '../contracts/sandbox-runtime.js';
import type { SandboxNetworkSettings, SettingsFile } from './settings-schema.js';

/**
 * A workspace's own `.toolcell/settings.json` arrives with the repository:
 * whoever wrote the repository wrote it. Until the user trusts the
 * workspace, the settings in it that would act outside the sandbox or
 * without asking are left out:
 *
 * - `mcpServers`: a stdio server is a program run on the host as the user,
 *   and `env`/`headers` expand the host's variables (secrets) and send them
 *   to the server;
 * - `tools.discoveryTrusted`: discovered tools would run without confirmation;
 * - `sandbox.image`: the sandbox would run an image the user did not choose;
 * - `sandbox.secrets`: it would hand the host's variables and files to commands
 *   the repository's author may have written;
 * - `sandbox.network`: applied only as far as it narrows the user's own
 *   (`narrowNetwork`): a repository must not open the sandbox's network;
 * - `sandbox.runtime` (trusted or not): only a stronger one than the user's
 *   (`tightenRuntime`);
 * - `trustedWorkspaces`: a workspace cannot vouch for itself (never applied).
 *
 * Everything else (discovery commands, which run in the sandbox; timeouts;
 * `sandbox.mode`, which can never be `none` from a file) applies as written.
 */
export function untrustedWorkspaceSettings(file: SettingsFile): { kept: SettingsFile; ignored: string[] } {
  const kept: SettingsFile = { ...file };
  const ignored: string[] = [];
  if (kept.mcpServers !== undefined && Object.keys(kept.mcpServers).length > 0) {
    ignored.push(`mcpServers (${Object.keys(kept.mcpServers).join(', ')})`);
  }
  delete kept.mcpServers;
  if (kept.tools?.discoveryTrusted !== undefined) {
    ignored.push('tools.discoveryTrusted');
    const { discoveryTrusted: _dropped, ...tools } = kept.tools;
    kept.tools = tools;
  }
  if (kept.sandbox?.image !== undefined) {
    ignored.push('sandbox.image');
    const { image: _dropped, ...sandbox } = kept.sandbox;
    kept.sandbox = sandbox;
  }
  if (kept.sandbox?.secrets !== undefined) {
    ignored.push('sandbox.secrets');
    const { secrets: _dropped, ...sandbox } = kept.sandbox;
    kept.sandbox = sandbox;
  }
  delete kept.trustedWorkspaces;
  return { kept, ignored };
}

/**
 * True when `workspace` is one of `trusted` (symlinks resolved on both
 * sides). Exactly one of them: trusting a folder does not trust the folders
 * below it, because a sandboxed command in a trusted workspace can write any
 * of them, and a `.toolcell/settings.json` it plants in `W/sub` would
 * otherwise start MCP servers on the host when a later run names `W/sub` as
 * its workspace. List each workspace to trust.
 */
export function isTrustedWorkspace(workspace: string, trusted: readonly string[]): boolean {
  const root = realOrResolved(workspace);
  return trusted.some((entry) => realOrResolved(entry) === root);
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * A workspace's `sandbox.runtime` against the user's: it applies only when it
 * is the same or a known stronger one (runc → runsc: mayTighten), whether
 * the workspace is trusted or not, so a repository can ask for gVisor but
 * never take its commands out of it. `file` is the workspace's file without
 * a runtime that does not apply; `ignored` says why, for the warning.
 */
export function tightenRuntime(user: string | undefined, file: SettingsFile): { file: SettingsFile; ignored?: string } {
  const wanted = file.sandbox?.runtime;
  if (wanted === undefined || mayTighten(user, wanted)) return { file };
  const { runtime: _dropped, ...sandbox } = file.sandbox!;
  return {
    file: { ...file, sandbox },
    ignored: `sandbox.runtime "${wanted}" ignored: a workspace may only ask for a stronger runtime than yours (${user ?? "the engine's default"}).`,
  };
}

/**
 * An untrusted workspace's `sandbox.network` against the user's: `"none"`
 * always applies (it narrows); an allowlist keeps only the entries the
 * user's own list has, word for word, and is dropped whole when the user
 * allows nothing. `dropped` names what was left out, for the warning.
 */
export function narrowNetwork(
  user: SandboxNetworkSettings | undefined,
  workspace: SandboxNetworkSettings,
): { network: SandboxNetworkSettings; dropped: string[] } {
  if (workspace === 'none') return { network: 'none', dropped: [] };
  const userAllow = user === undefined || user === 'none' ? [] : user.allow;
  const kept = workspace.allow.filter((entry) => userAllow.includes(entry));
  const dropped = workspace.allow.filter((entry) => !userAllow.includes(entry));
  return { network: userAllow.length === 0 ? (user ?? 'none') : { allow: kept }, dropped };
}
