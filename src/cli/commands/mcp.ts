import type { Command } from 'commander';

/** Registers `toolcell mcp`. (Placeholder: the command is being built.) */
export function registerMcpCommand(program: Command): void {
  void program;
}
