import { lstatSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { STATE_DIR_NAME } from '../fs/toolcell-state.js';
import { loadPolicyFile } from './load-policy-file.js';
import type { PolicyRule } from './policy-rule.js';

/** Where policy files live, relative to a home folder or a workspace root. */
export const POLICIES_RELATIVE_DIR = join(STATE_DIR_NAME, 'policies');

/** The file "allow always" in `toolcell chat` writes its rules to, in the user's policies folder. */
export const ALLOWED_IN_CHAT_FILE = 'allowed-in-chat.toml';

/** The user's policies folder: `~/.toolcell/policies`. */
export function userPoliciesDir(homeDir: string = homedir()): string {
  return join(homeDir, POLICIES_RELATIVE_DIR);
}

export interface PolicySourceOptions {
  /** The user's home folder (default `os.homedir()`); tests point it elsewhere. */
  homeDir?: string;
  /** The workspace root; its `.toolcell/policies/*.toml` are read only when `workspaceTrusted`. */
  workspace?: string;
  workspaceTrusted?: boolean;
  /** Files named by `--policy` (each required). */
  files?: readonly string[];
}

/**
 * Every rule from the policy sources, in this order: the user's
 * `~/.toolcell/policies/*.toml` (by file name), a trusted workspace's
 * `.toolcell/policies/*.toml`, then each `--policy` file. The order only
 * breaks exact ties in messages; which rule wins is priority and decision.
 * An untrusted workspace's policies are not read: a repository must not be
 * able to allow its own commands.
 */
export function loadPolicySources(options: PolicySourceOptions): PolicyRule[] {
  const rules: PolicyRule[] = [];
  for (const file of tomlFilesIn(userPoliciesDir(options.homeDir))) rules.push(...loadPolicyFile(file, { required: false, origin: 'user' }));
  if (options.workspace !== undefined && options.workspaceTrusted === true) {
    const dir = join(resolve(options.workspace), POLICIES_RELATIVE_DIR);
    if (dir !== userPoliciesDir(options.homeDir) && isPlainFolder(join(resolve(options.workspace), STATE_DIR_NAME)) && isPlainFolder(dir)) {
      for (const file of tomlFilesIn(dir)) rules.push(...loadPolicyFile(file, { required: false, origin: 'workspace' }));
    }
  }
  for (const file of options.files ?? []) rules.push(...loadPolicyFile(resolve(file), { required: true, origin: 'user' }));
  return rules;
}

function tomlFilesIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith('.toml'))
      .sort()
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

/** A workspace's folder that is a real folder, not a link a sandboxed command planted. */
function isPlainFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
