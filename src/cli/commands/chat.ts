import type { Command } from 'commander';
import { type AgentCliOptions, maxTurnsOption, modelOption, telemetryFileOption } from '../../ui/agent-cli-options.js';
import type { AgentSetup } from '../agent-setup.js';
import { ChatSession } from '../../ui/chat/chat-session.js';
import { PlainTerminal } from '../../ui/chat/plain-terminal.js';
import { Screen } from '../../ui/chat/screen.js';
import { TtyTerminal } from '../../ui/chat/tty-terminal.js';
import { colorEnabled, createStyle } from '../../ui/style.js';
import { exitCodeForSetUpFailure } from '../exit-codes.js';
import { type RunnerCliOptions, addRuntimeOptions } from '../options.js';

/** How often the live region may be redrawn (live output, spinner), in ms. */
const REFRESH_MS = 100;

/** Registers `toolcell chat`: the interactive terminal front end. */
export function registerChatCommand(program: Command): void {
  addRuntimeOptions(
    program
      .command('chat')
      .description('Chat with Gemini in the terminal: watch its tool calls run, approve the risky ones.')
      .addOption(modelOption())
      .addOption(maxTurnsOption()),
  )
    .addOption(telemetryFileOption())
    .addHelpText('after', CHAT_HELP)
    .action(async (options: RunnerCliOptions & AgentCliOptions) => {
      process.exitCode = await runChat(options);
    });
}

const CHAT_HELP = `
Each tool call is shown with what it does while it runs, its output updating in
place. Calls that need approval ask first:
  edit  a coloured diff: allow once · allow always · modify in $VISUAL/$EDITOR · no
  exec  the command and where it runs (which sandbox)
  mcp   the server and tool
Answer with ↑↓ and Enter or the option's number; Esc declines. "Always" answers
last for the session. The approval mode is shown at the bottom; Shift+Tab or
/approval MODE switches it. Esc or Ctrl+C cancels a running request (its
commands are stopped); Ctrl+C on an empty line, Ctrl+D or /quit leaves.

Without a terminal (piped input or output) prompts and answers are read as
lines and nothing is redrawn. NO_COLOR turns colours off.

Needs GEMINI_API_KEY (or GOOGLE_API_KEY); GOOGLE_GEMINI_BASE_URL moves the endpoint.

Exit codes:
  0    left normally
  1    the runtime failed to start
  2    usage or configuration error (bad option, no API key, bad workspace)`;

async function runChat(options: RunnerCliOptions & AgentCliOptions): Promise<number> {
  const style = createStyle(colorEnabled(process.stdout));
  const session = new ChatSession({ style, model: options.model, workspace: options.workspace });
  let setup: AgentSetup;
  try {
    // Loaded on use: @google/genai is heavy, and other commands do not need it.
    const { setUpAgent } = await import('../agent-setup.js');
    setup = await setUpAgent({ ...options, interactive: true, scheduler: session.schedulerHooks() });
  } catch (error) {
    process.stderr.write(`toolcell chat: ${(error as Error).message}\n`);
    return exitCodeForSetUpFailure(error);
  }
  const screen = new Screen({ output: process.stdout, view: () => session.view(), throttleMs: REFRESH_MS });
  const terminal =
    process.stdin.isTTY && process.stdout.isTTY
      ? new TtyTerminal({ input: process.stdin, output: process.stdout, screen })
      : new PlainTerminal({ input: process.stdin, screen, prompt: () => `[${setup.scheduler.approvalMode}] >` });
  session.attach({ terminal, agent: setup.agent, scheduler: setup.scheduler, registry: setup.runtime.registry });
  try {
    return await session.run();
  } finally {
    await setup.close();
  }
}
