import type { Command } from 'commander';

/** Registers `toolcell sandbox`. (Placeholder: the command is being built.) */
export function registerSandboxCommand(program: Command): void {
  void program;
}
