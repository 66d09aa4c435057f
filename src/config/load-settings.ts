import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { parseOptions } from '../contracts/parse-options.js';
import { ToolcellError, ToolErrorType } from '../errors.js';
import { parseSettingsJson, readSettingsText, type SettingsFileOrigin } from './settings-file.js';
import { settingsSchema } from './settings-schema.js';
import { isTrustedWorkspace, narrowNetwork, tightenRuntime, untrustedWorkspaceSettings } from './workspace-trust.js';
import type { Settings, SettingsFile } from './settings-schema.js';

/** Where settings live, relative to a workspace root or a home folder. */
export const SETTINGS_RELATIVE_PATH = join('.toolcell', 'settings.json');

const loadSettingsOptionsSchema = z.object({
  /** The workspace root; its `.toolcell/settings.json` wins over the user's. */
  workspace: z.string().min(1),
  /**
   * An explicit settings file (`--settings FILE`). When given it is the only
   * file read: neither the workspace's nor the user's file is merged in, so a
   * run is fully described by the file named on the command line.
   */
  settingsFile: z.string().min(1).optional(),
  /** The user's home folder (default `os.homedir()`); tests point it elsewhere. */
  homeDir: z.string().optional(),
  /**
   * Apply the workspace's own settings file in full, as if the workspace were
   * listed in the user's `trustedWorkspaces` (`--trust-workspace`).
   */
  trustWorkspace: z.boolean().optional(),
});

export type LoadSettingsOptions = z.input<typeof loadSettingsOptionsSchema>;

/**
 * Reads and validates the settings that apply to a workspace: the user's
 * `~/.toolcell/settings.json`, then the workspace's `.toolcell/settings.json`
 * on top (per field for `tools`, `sandbox` and `shell`, per server name for
 * `mcpServers`). The workspace's file is applied in full only when the
 * workspace is trusted (the user's `trustedWorkspaces`, or `trustWorkspace`);
 * otherwise what it could do outside the sandbox is left out, with a warning
 * (workspace-trust.ts). Missing default files are fine; an unreadable,
 * malformed or invalid file throws a ToolcellError `invalid_settings` naming
 * the file and the field, never falls back silently.
 */
export function loadSettings(raw: LoadSettingsOptions): Settings {
  const options = parseOptions(loadSettingsOptionsSchema, raw, 'loadSettings');

  const settings: Settings = { tools: {}, mcpServers: {}, sandbox: {}, shell: {}, sources: [], workspaceTrusted: true, warnings: [] };
  if (options.settingsFile !== undefined) {
    // Named on the command line by the user: applied in full.
    const file = resolve(options.settingsFile);
    const parsed = readSettingsFile(file, { required: true, origin: 'user' });
    if (parsed) mergeInto(settings, parsed, file);
    return settings;
  }
  const userFile = join(options.homeDir ?? homedir(), SETTINGS_RELATIVE_PATH);
  const workspaceFile = join(resolve(options.workspace), SETTINGS_RELATIVE_PATH);
  const user = readSettingsFile(userFile, { required: false, origin: 'user' });
  if (user) mergeInto(settings, user, userFile);
  if (workspaceFile === userFile) return settings;
  settings.workspaceTrusted = options.trustWorkspace === true || isTrustedWorkspace(options.workspace, user?.trustedWorkspaces ?? []);
  const workspace = readSettingsFile(workspaceFile, { required: false, origin: 'workspace' });
  if (!workspace) return settings;
  // Trusted or not, a workspace may only make the runtime stronger (workspace-trust.ts).
  const runtime = tightenRuntime(settings.sandbox.runtime, workspace);
  if (runtime.ignored !== undefined) settings.warnings.push(`${workspaceFile}: ${runtime.ignored}`);
  if (settings.workspaceTrusted) {
    if (workspace.trustedWorkspaces !== undefined) settings.warnings.push(`${workspaceFile}: trustedWorkspaces is read only from ${userFile}; ignored here.`);
    const { trustedWorkspaces: _ignored, ...applied } = runtime.file;
    mergeInto(settings, applied, workspaceFile);
    return settings;
  }
  const { kept, ignored } = untrustedWorkspaceSettings(runtime.file);
  if (kept.sandbox?.network !== undefined) {
    const { network, dropped } = narrowNetwork(settings.sandbox.network, kept.sandbox.network);
    kept.sandbox = { ...kept.sandbox, network };
    if (dropped.length > 0) ignored.push(`sandbox.network.allow entries not in your own list (${dropped.join(', ')})`);
  }
  if (ignored.length > 0) {
    settings.warnings.push(
      `${workspaceFile}: ${ignored.join(', ')} ignored: the workspace is not trusted. ` +
        `Trust it with --trust-workspace, or add it to trustedWorkspaces in ${userFile}.`,
    );
  }
  mergeInto(settings, kept, workspaceFile);
  return settings;
}

/** Reads and validates one settings file; `undefined` when an optional file does not exist. */
export function readSettingsFile(file: string, options: { required: boolean; origin?: SettingsFileOrigin }): SettingsFile | undefined {
  const text = readSettingsText(file, options.origin ?? 'user');
  if (text === undefined) {
    if (!options.required) return undefined;
    throw new ToolcellError(ToolErrorType.INVALID_SETTINGS, `Cannot read settings file ${file}: the file does not exist`);
  }
  const json = parseSettingsJson(file, text);
  const result = settingsSchema.safeParse(json);
  if (!result.success) {
    throw new ToolcellError(ToolErrorType.INVALID_SETTINGS, `Invalid settings in ${file}: ${describeIssues(result.error)}`);
  }
  return result.data;
}

function mergeInto(settings: Settings, file: SettingsFile, source: string): void {
  settings.tools = { ...settings.tools, ...file.tools };
  // Secrets are merged by name: a trusted workspace adds to the user's, it does not drop them.
  const secrets = settings.sandbox.secrets || file.sandbox?.secrets ? { ...settings.sandbox.secrets, ...file.sandbox?.secrets } : undefined;
  settings.sandbox = { ...settings.sandbox, ...file.sandbox, ...(secrets ? { secrets } : {}) };
  settings.shell = { ...settings.shell, ...file.shell };
  settings.mcpServers = { ...settings.mcpServers, ...file.mcpServers };
  settings.sources.push(source);
}

/** `mcpServers.github.timeout: Too small: expected number to be >0; tools: Unrecognized key: "discoveryComand"`. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.map(String).join('.');
      return field === '' ? issue.message : `${field}: ${issue.message}`;
    })
    .join('; ');
}
