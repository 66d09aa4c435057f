import { ShellTool, type ShellToolOptions } from './shell-tool.js';

/**
 * Registers `run_shell_command` over a sandbox session and returns it. The
 * caller owns the session (and its ShellService) and closes it.
 *
 * @example
 * const service = await ShellService.create({ liveUpdateIntervalMs: 1000 });
 * const session = await service.openSession({ sandbox: 'auto', workspaceRoot: workspace.roots[0] });
 * registerShellTool(registry, { session, workspace, wallTimeoutMs: 60_000 });
 * runtime.onClose(() => service.close());
 *
 * `registry` is anything with `register` (a ToolRegistry): tools sit below the registry.
 */
export function registerShellTool(registry: { register(tool: ShellTool): void }, options: ShellToolOptions): ShellTool {
  const tool = new ShellTool(options);
  registry.register(tool);
  return tool;
}
