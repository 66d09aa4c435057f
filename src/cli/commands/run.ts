import type { Command } from 'commander';

/** Registers `toolcell run`. (Placeholder: the command is being built.) */
export function registerRunCommand(program: Command): void {
  void program;
}
