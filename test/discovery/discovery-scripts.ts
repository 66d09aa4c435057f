import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { discoverCommandTools } from '../../src/discovery/discover-command-tools.js';
import type { DiscoveredTool } from '../../src/discovery/discovered-tool.js';
import { shellCommandRunner } from '../../src/discovery/shell-command-runner.js';
import type { ShellService } from '../../src/shell/shell-service.js';
import { tempWorkspace } from '../helpers/mcp.js';

/**
 * POSIX sh scripts for discovery tests, written into a workspace so they run
 * wherever the shell session runs commands (the host, or a container with the
 * workspace mounted, where there may be no node).
 */
export const DECLARATIONS = [
  {
    name: 'greet',
    description: 'Greets someone.',
    parameters: { type: 'OBJECT', properties: { who: { type: 'STRING', format: 'email' } }, required: ['who'] },
  },
  { name: 'fail', description: 'Exits 7 after writing to both streams.' },
  { name: 'killself', description: 'Killed by SIGKILL.' },
  { name: 'hang', description: 'Never ends.' },
  { name: 'ignore_stdin', description: 'Does not read its input.', parametersJsonSchema: { type: 'object', properties: { blob: { type: 'string' } } } },
  { name: 'my tool/with spaces', description: 'A name Gemini does not accept as is.' },
];

const CALL_SCRIPT = `#!/bin/sh
name="$1"
case "$name" in
  greet) input=$(cat); printf 'hello %s' "$input" ;;
  fail) cat >/dev/null; echo "partial output"; echo "something broke" >&2; exit 7 ;;
  killself) kill -9 $$ ;;
  hang) sleep 1000 ;;
  ignore_stdin) echo ignored ;;
  *) input=$(cat); printf 'called [%s] with %s' "$name" "$input" ;;
esac
`;

/** Writes the scripts; returns the commands to put in settings. */
export async function writeDiscoveryScripts(dir: string): Promise<{ discoveryCommand: string; callCommand: string }> {
  await writeFile(join(dir, 'declarations.json'), JSON.stringify(DECLARATIONS));
  await writeFile(join(dir, 'call.sh'), CALL_SCRIPT);
  await chmod(join(dir, 'call.sh'), 0o755);
  return { discoveryCommand: 'cat declarations.json', callCommand: 'sh ./call.sh' };
}

/**
 * A workspace with the scripts, a shell session on it (closed at teardown)
 * and the tools discovered through it.
 */
export async function discoverInSession(
  t: { teardown: (fn: () => Promise<void>) => void },
  options: { service: ShellService; sandbox: 'docker' | 'none'; callTimeoutMs?: number; trusted?: boolean },
) {
  const { service, sandbox, ...discovery } = options;
  const workspace = await tempWorkspace(`toolcell-discovery-${sandbox}-`);
  const session = await service.openSession({ sandbox, workspaceRoot: workspace.dir });
  t.teardown(async () => {
    await session.close();
    await workspace.cleanup();
  });
  const commands = await writeDiscoveryScripts(workspace.dir);
  const runner = shellCommandRunner(session);
  const tools = await discoverCommandTools({ ...commands, runner, ...discovery });
  const tool = (name: string): DiscoveredTool => {
    const found = tools.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no ${name} among ${tools.map((candidate) => candidate.name).join(', ')}`);
    return found;
  };
  return { session, tools, tool, runner, workspace: workspace.dir, commands };
}
