import { join } from 'node:path';
import { readSettingsText } from '../config/settings-file.js';
import { ToolErrorType } from '../errors.js';

/** Where a workspace keeps the Dockerfile of its own sandbox image (as Gemini CLI's `.gemini/sandbox.Dockerfile`). */
export const SANDBOX_DOCKERFILE = join('.toolcell', 'sandbox.Dockerfile');

/**
 * The workspace's own sandbox Dockerfile, when it has one and is trusted. A
 * repository's file would otherwise choose what its own commands run on (and
 * what a build runs on the host's engine): an untrusted workspace's is left
 * out with a warning, and never built. Read as a workspace settings file is:
 * no symbolic link at it or its folder, a regular file, bounded.
 */
export function workspaceSandboxDockerfile(root: string, trusted: boolean, onWarning: (message: string) => void): string | undefined {
  const file = join(root, SANDBOX_DOCKERFILE);
  const text = readSettingsText(file, 'workspace', { code: ToolErrorType.INVALID_SETTINGS, noun: 'sandbox Dockerfile' });
  if (text === undefined) return undefined;
  if (!trusted) {
    onWarning(
      `${file} ignored: the workspace is not trusted, so its sandbox image is not built. Trust it with --trust-workspace, or add it to trustedWorkspaces.`,
    );
    return undefined;
  }
  return text;
}
