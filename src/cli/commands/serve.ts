import type { Command } from 'commander';

/** Registers `toolcell serve`. (Placeholder: the command is being built.) */
export function registerServeCommand(program: Command): void {
  void program;
}
