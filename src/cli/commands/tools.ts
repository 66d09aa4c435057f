import type { Command } from 'commander';
import { EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { type RunnerCliOptions, sandboxOption, settingsOption, trustWorkspaceOption, workspaceOption, runtimeOptionsFrom } from '../options.js';
import type { Runtime } from '../../runtime/runtime.js';

/** Registers `toolcell tools`: lists the FunctionDeclarations the model is given. */
export function registerToolsCommand(program: Command): void {
  program
    .command('tools')
    .description('List the tools (Gemini FunctionDeclarations) available in a workspace: built-in, discovered and MCP.')
    .addOption(workspaceOption())
    .addOption(sandboxOption())
    .addOption(settingsOption())
    .addOption(trustWorkspaceOption())
    .option('--json', 'print the FunctionDeclarations as a JSON array')
    .action(async (options: Omit<RunnerCliOptions, 'approval'> & { json?: boolean }) => {
      let runtime: Runtime;
      try {
        // Loaded on use, so `--help` and `--version` start fast.
        const { createRuntime } = await import('../../runtime/runtime.js');
        runtime = await createRuntime(runtimeOptionsFrom(options));
      } catch (error) {
        process.stderr.write(`toolcell tools: ${(error as Error).message}\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      try {
        if (options.json) {
          process.stdout.write(`${JSON.stringify(runtime.registry.functionDeclarations(), null, 2)}\n`);
        } else {
          for (const tool of runtime.registry.list()) {
            const summary = tool.description.split('\n')[0] ?? '';
            process.stdout.write(`${tool.name.padEnd(28)} ${tool.kind.padEnd(8)} ${summary}\n`);
          }
        }
        process.exitCode = EXIT_OK;
      } finally {
        await runtime.close();
      }
    });
}
