import { Command, CommanderError } from 'commander';
import { EXIT_USAGE } from './exit-codes.js';
import { VERSION } from '../version.js';

type RegisterCommand = (program: Command) => void;

/**
 * Each command's module (commands/<name>.ts), in the order the help lists
 * them. Loaded only when the command line needs it: `toolcell exec …` loads
 * exec's alone, not the hosting server's or the chat screen's, which were
 * most of the CLI's start-up.
 */
const COMMANDS: ReadonlyArray<readonly [name: string, load: () => Promise<RegisterCommand>]> = [
  ['tools', async () => (await import('./commands/tools.js')).registerToolsCommand],
  ['exec', async () => (await import('./commands/exec.js')).registerExecCommand],
  ['sandbox', async () => (await import('./commands/sandbox.js')).registerSandboxCommand],
  ['mcp', async () => (await import('./commands/mcp.js')).registerMcpCommand],
  ['serve', async () => (await import('./commands/serve.js')).registerServeCommand],
  ['tenant', async () => (await import('./commands/tenant.js')).registerTenantCommand],
  ['run', async () => (await import('./commands/run.js')).registerRunCommand],
  ['chat', async () => (await import('./commands/chat.js')).registerChatCommand],
  ['policy', async () => (await import('./commands/policy.js')).registerPolicyCommand],
  ['hosting', async () => (await import('./commands/hosting.js')).registerHostingCommand],
];

const ALL_COMMANDS: readonly string[] = COMMANDS.map(([name]) => name);

/**
 * Builds the `toolcell` command tree with the commands named (default: all;
 * see commandsFor).
 */
export async function buildProgram(names: readonly string[] = ALL_COMMANDS): Promise<Command> {
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
  const chosen = COMMANDS.filter(([name]) => names.includes(name));
  for (const register of await Promise.all(chosen.map(([, load]) => load()))) register(program);
  for (const command of program.commands) for (const each of [command, ...command.commands]) each.exitOverride();
  return program;
}

/**
 * The commands a command line needs: the one it names; none for
 * `--version`; all of them otherwise (the root's help lists them, `help`
 * shows any, and a name that is no command gets a suggestion among them).
 */
function commandsFor(argv: readonly string[]): string[] {
  const first = argv[2];
  if (first === '--version' || first === '-V') return [];
  if (first !== undefined && ALL_COMMANDS.includes(first)) return [first];
  return [...ALL_COMMANDS];
}

/** Runs the CLI; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = await buildProgram(commandsFor(argv));
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
