import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { z } from 'zod';
import { ToolcellError } from '../errors.js';
import { settingsSchema } from './settings-schema.js';
import type { Settings, SettingsFile } from './settings-schema.js';

/** Where settings live, relative to a workspace root or a home folder. */
export const SETTINGS_RELATIVE_PATH = join('.toolcell', 'settings.json');

export interface LoadSettingsOptions {
  /** The workspace root; its `.toolcell/settings.json` wins over the user's. */
  workspace: string;
  /**
   * An explicit settings file (`--settings FILE`). When given it is the only
   * file read: neither the workspace's nor the user's file is merged in, so a
   * run is fully described by the file named on the command line.
   */
  settingsFile?: string;
  /** The user's home folder (default `os.homedir()`); tests point it elsewhere. */
  homeDir?: string;
}

/**
 * Reads and validates the settings that apply to a workspace: the user's
 * `~/.toolcell/settings.json`, then the workspace's `.toolcell/settings.json`
 * on top (per field for `tools`, `sandbox` and `shell`, per server name for
 * `mcpServers`). Missing default files are fine; an unreadable, malformed or
 * invalid file throws a ToolcellError `invalid_settings` naming the file and
 * the field, never falls back silently.
 */
export function loadSettings(options: LoadSettingsOptions): Settings {
  if (typeof options !== 'object' || options === null) throw new TypeError('loadSettings: options must be an object');
  if (typeof options.workspace !== 'string' || options.workspace === '') {
    throw new TypeError('loadSettings: options.workspace must be a non-empty string');
  }
  if (options.settingsFile !== undefined && (typeof options.settingsFile !== 'string' || options.settingsFile === '')) {
    throw new TypeError('loadSettings: options.settingsFile must be a non-empty string');
  }
  if (options.homeDir !== undefined && typeof options.homeDir !== 'string') {
    throw new TypeError('loadSettings: options.homeDir must be a string');
  }

  const settings: Settings = { tools: {}, mcpServers: {}, sandbox: {}, shell: {}, sources: [] };
  if (options.settingsFile !== undefined) {
    const file = resolve(options.settingsFile);
    const parsed = readSettingsFile(file, { required: true });
    if (parsed) mergeInto(settings, parsed, file);
    return settings;
  }
  const userFile = join(options.homeDir ?? homedir(), SETTINGS_RELATIVE_PATH);
  const workspaceFile = join(resolve(options.workspace), SETTINGS_RELATIVE_PATH);
  for (const file of userFile === workspaceFile ? [workspaceFile] : [userFile, workspaceFile]) {
    const parsed = readSettingsFile(file, { required: false });
    if (parsed) mergeInto(settings, parsed, file);
  }
  return settings;
}

/** Reads and validates one settings file; `undefined` when an optional file does not exist. */
export function readSettingsFile(file: string, options: { required: boolean }): SettingsFile | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !options.required) return undefined;
    const reason = code === 'ENOENT' ? 'the file does not exist' : (error as Error).message;
    throw new ToolcellError('invalid_settings', `Cannot read settings file ${file}: ${reason}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ToolcellError('invalid_settings', `Settings file ${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const result = settingsSchema.safeParse(json);
  if (!result.success) {
    throw new ToolcellError('invalid_settings', `Invalid settings in ${file}: ${describeIssues(result.error)}`);
  }
  return result.data;
}

function mergeInto(settings: Settings, file: SettingsFile, source: string): void {
  settings.tools = { ...settings.tools, ...file.tools };
  settings.sandbox = { ...settings.sandbox, ...file.sandbox };
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
