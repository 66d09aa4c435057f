import type { Command } from 'commander';

/** Registers `toolcell chat`. (Placeholder: the command is being built.) */
export function registerChatCommand(program: Command): void {
  void program;
}
