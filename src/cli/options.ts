import { type Command, InvalidArgumentError, Option } from 'commander';
import { APPROVAL_MODES, type ApprovalMode, isApprovalMode } from '../contracts/approval-mode.js';
import { sandboxRuntimeSchema } from '../contracts/sandbox-runtime.js';
import type { RuntimeOptions } from '../runtime/runtime.js';
import type { SandboxMode } from '../runtime/shell-settings.js';

/** Options shared by the commands that run tools. */
export function workspaceOption(): Option {
  return new Option('-w, --workspace <dir>', 'workspace folder; every path is confined to it').default(process.cwd(), 'the current folder');
}

export function approvalOption(defaultMode: ApprovalMode = 'default'): Option {
  return new Option('-a, --approval <mode>', 'approval mode: default | autoEdit | yolo | plan').default(defaultMode).argParser((value: string) => {
    if (!isApprovalMode(value)) throw new InvalidArgumentError(`must be one of ${APPROVAL_MODES.join(', ')}`);
    return value;
  });
}

export function sandboxOption(): Option {
  // No commander default: an absent flag lets settings' sandbox.mode apply (resolveSandboxMode).
  return new Option(
    '--sandbox <mode>',
    "where shell commands run: docker | none (the host, no isolation) | auto (docker, or refuse); default: settings' sandbox.mode, else auto",
  ).argParser((value: string): SandboxMode => {
    if (value !== 'docker' && value !== 'none' && value !== 'auto') throw new InvalidArgumentError('must be docker, none or auto');
    return value;
  });
}

/** A `--runtime` value: a runtime name (sandboxRuntimeSchema), or a usage error. */
export function parseRuntimeName(value: string): string {
  const parsed = sandboxRuntimeSchema.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError('must be a runtime name such as runsc or runc');
  return parsed.data;
}

export function runtimeOption(): Option {
  // No commander default: an absent flag lets settings' sandbox.runtime apply.
  return new Option(
    '--runtime <name>',
    "OCI runtime of the sandbox's containers: runsc (gVisor: a kernel of its own between commands and the host's; " +
      "set it up with `toolcell sandbox setup --runtime runsc`) | runc | another the engine has; default: settings' sandbox.runtime, else the engine's (runc)",
  ).argParser(parseRuntimeName);
}

export function timeoutOption(): Option {
  return new Option('--timeout <seconds>', 'wall-clock limit of one shell command').argParser((value: string) => {
    const seconds = Number(value);
    if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
    return seconds;
  });
}

export function settingsOption(): Option {
  return new Option('--settings <file>', 'settings file overriding <workspace>/.toolcell/settings.json and ~/.toolcell/settings.json');
}

export function trustWorkspaceOption(): Option {
  return new Option(
    '--trust-workspace',
    "apply the workspace's own .toolcell/settings.json in full: its MCP servers, discoveryTrusted and sandbox.image " +
      '(otherwise only for workspaces listed in trustedWorkspaces of ~/.toolcell/settings.json)',
  );
}

export function policyOption(): Option {
  return new Option(
    '--policy <file>',
    "policy file (TOML [[rule]] tables) read after ~/.toolcell/policies/*.toml and a trusted workspace's .toolcell/policies/*.toml; repeatable",
  ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
}

/**
 * The options every command that runs tools takes (chat, run, exec, serve),
 * declared once: the workspace, approval mode, sandbox and its runtime, the
 * shell timeout, settings, workspace trust and policy files. They parse into
 * RunnerCliOptions, which runtimeOptionsFrom turns into createRuntime's options.
 */
export function addRuntimeOptions(command: Command): Command {
  for (const option of [
    workspaceOption(),
    approvalOption(),
    sandboxOption(),
    runtimeOption(),
    timeoutOption(),
    settingsOption(),
    trustWorkspaceOption(),
    policyOption(),
  ])
    command.addOption(option);
  return command;
}

/** What the commands above parse into. */
export interface RunnerCliOptions {
  workspace: string;
  approval: ApprovalMode;
  sandbox?: SandboxMode;
  runtime?: string;
  timeout?: number;
  settings?: string;
  trustWorkspace?: boolean;
  policy?: string[];
  /** `serve --sandbox-cpus`: the CPUs every sandbox container may run on. */
  sandboxCpus?: string;
}

/** The createRuntime options that the shared flags stand for; a flag not given leaves its option out (settings decide). */
export function runtimeOptionsFrom(cli: Omit<RunnerCliOptions, 'approval'> & { approval?: ApprovalMode }): RuntimeOptions {
  return {
    workspace: cli.workspace,
    ...(cli.approval ? { approvalMode: cli.approval } : {}),
    ...(cli.sandbox ? { sandbox: cli.sandbox } : {}),
    ...(cli.runtime ? { sandboxRuntime: cli.runtime } : {}),
    ...(cli.timeout ? { timeoutSeconds: cli.timeout } : {}),
    ...(cli.settings ? { settingsFile: cli.settings } : {}),
    ...(cli.trustWorkspace ? { trustWorkspace: true } : {}),
    ...(cli.policy?.length ? { policyFiles: cli.policy } : {}),
    ...(cli.sandboxCpus !== undefined ? { sandboxCpus: cli.sandboxCpus } : {}),
  };
}
