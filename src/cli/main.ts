import { Command, CommanderError } from 'commander';
import { registerChatCommand } from './commands/chat.js';
import { registerExecCommand } from './commands/exec.js';
import { registerHostingCommand } from './commands/hosting.js';
import { registerMcpCommand } from './commands/mcp.js';
import { registerPolicyCommand } from './commands/policy.js';
import { registerRunCommand } from './commands/run.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerServeCommand } from './commands/serve.js';
import { registerTenantCommand } from './commands/tenant.js';
import { registerToolsCommand } from './commands/tools.js';
import { EXIT_USAGE } from './exit-codes.js';
import { VERSION } from '../version.js';

/** Builds the `toolcell` command tree. Each command lives in commands/<name>.ts. */
export function buildProgram(): Command {
  const program = new Command('toolcell')
    .description("Run AI models' tool calls safely: built-in tools in worker threads, shell commands in hardened Docker sandboxes.")
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Environment:
  TOOLCELL_DEBUG=1  print the sandbox supervisor's diagnostics on stderr (such as why it killed a command)`,
    )
    .exitOverride();
  registerToolsCommand(program);
  registerExecCommand(program);
  registerSandboxCommand(program);
  registerMcpCommand(program);
  registerServeCommand(program);
  registerTenantCommand(program);
  registerRunCommand(program);
  registerChatCommand(program);
  registerPolicyCommand(program);
  registerHostingCommand(program);
  for (const command of program.commands) for (const each of [command, ...command.commands]) each.exitOverride();
  return program;
}

/** Runs the CLI; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit through here with code 0.
      if (error.exitCode === 0) return 0;
      return EXIT_USAGE;
    }
    throw error;
  }
}
