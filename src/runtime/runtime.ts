import { realpath, stat } from 'node:fs/promises';
import { z } from 'zod';
import { join } from 'node:path';
import { ToolcellError, ToolErrorType, errorMessage } from '../errors.js';
import { assertRuntimeAvailable } from '../backends/docker/runtimes.js';
import { parseOptions } from '../contracts/parse-options.js';
import { cpuListSchema } from '../contracts/cpu-list.js';
import { sandboxRuntimeSchema } from '../contracts/sandbox-runtime.js';
import { loadSettings } from '../config/load-settings.js';
import { sandboxAllowList, type Settings } from '../config/settings-schema.js';
import { pruneOldFiles } from '../fs/prune-old-files.js';
import { shellCommandRunner } from '../discovery/shell-command-runner.js';
import { registerExtensionTools } from './extensions.js';
import { WebFetchTool, type WebFetchToolOptions } from '../tools/web/web-fetch-tool.js';
import { registerShellTool } from '../tools/shell/register-shell-tool.js';
import { LazyShellSession } from './lazy-shell-session.js';
import { localEgressLogFile, resolveSandboxMode, shellServiceOptions, type SandboxMode } from './shell-settings.js';
import { openEgressLog, type EgressLog } from '../egress/egress-log.js';
import { resolveLocalSecrets } from '../secrets/local-secrets.js';
import { workspaceSandboxDockerfile } from './sandbox-dockerfile.js';
import { SecretRedactor } from '../secrets/secret-redactor.js';
import { WorkerPool, type WorkerPoolOptions } from '../worker-pool/worker-pool.js';
import { ToolRegistry } from '../registry/tool-registry.js';
import type { ApprovalMode } from '../contracts/approval-mode.js';
import { allowedInChatFile, saveAllowedPrefixes } from '../policy/allowed-in-chat.js';
import { checkRules } from '../policy/load-policy-file.js';
import { PolicyEngine } from '../policy/policy-engine.js';
import type { PolicyRuleInput } from '../policy/policy-rule.js';
import { loadPolicySources } from '../policy/policy-sources.js';
import { Scheduler, type SchedulerOptions } from '../scheduler/scheduler.js';
import { combineSinks, type TelemetrySink } from '../telemetry/events.js';
import { OtelTelemetrySink } from '../telemetry/otel.js';
import type { WorkspaceInfo } from '../tools/define-tool.js';

export type { SandboxMode } from './shell-settings.js';

export interface RuntimeOptions {
  /** The workspace folder; every path is confined to it. */
  workspace: string;
  approvalMode?: ApprovalMode;
  /**
   * Where shell commands run, when the user named it (`--sandbox`). Absent:
   * settings' `sandbox.mode` (never `none`, see resolveSandboxMode), else `auto`.
   */
  sandbox?: SandboxMode;
  /** Wall-clock limit of one shell command and of one discovered tool's call, in seconds (wins over settings). */
  timeoutSeconds?: number;
  /**
   * The sandbox containers' OCI runtime when the user named it (`--runtime`,
   * e.g. `runsc`): wins over settings' `sandbox.runtime`. A runtime the engine
   * does not have (named either way) is refused when the runtime is created,
   * before anything runs.
   */
  sandboxRuntime?: string;
  /**
   * The CPUs every sandbox container may run on (`serve --sandbox-cpus`, the
   * Docker backend's `cpuSet`), as Linux lists them: `1`, `2-3`. Default: any.
   */
  sandboxCpus?: string;
  /** A settings file that overrides the workspace's and the user's. */
  settingsFile?: string;
  /** Apply the workspace's own settings file in full (loadSettings' `trustWorkspace`). */
  trustWorkspace?: boolean;
  /**
   * Policy files (`--policy`), read after the user's `~/.toolcell/policies/*.toml`
   * and a trusted workspace's `.toolcell/policies/*.toml`. A missing or invalid
   * file throws `invalid_policy`.
   */
  policyFiles?: readonly string[];
  /**
   * Policy rules given in code, in the policy file's `[[rule]]` shape (a host
   * passes each tenant's rules here). Checked like a file's; named
   * `options.policy` in messages.
   */
  policy?: readonly PolicyRuleInput[];
  /** Where finished calls are reported, besides the OpenTelemetry API (always used; exported only when an SDK is registered). */
  telemetry?: TelemetrySink;
  pool?: WorkerPoolOptions;
  /** Warnings while building the registry (e.g. a tool replaced). Default: stderr. */
  onWarning?: (message: string) => void;
  /** How web_fetch answers its prompt through a model (`run` and `chat` pass the agent's); without it web_fetch returns the pages' text. */
  webFetchSummarizer?: WebFetchToolOptions['summarize'];
}

/** Everything a command needs to run tool calls; close it when done. */
export interface Runtime {
  readonly workspace: WorkspaceInfo;
  readonly registry: ToolRegistry;
  readonly pool: WorkerPool;
  /** The settings that apply to the workspace. */
  readonly settings: Settings;
  /**
   * Removes the values of `sandbox.secrets` (and their encoded forms) from a
   * text; every scheduler of this runtime applies it to every tool result.
   * Undefined when there are no secrets.
   */
  readonly redactor: SecretRedactor | undefined;
  /** The values of `sandbox.secrets` read on the host, for shell sessions this runtime's caller opens itself (`serve`). */
  readonly sandboxSecrets: Readonly<Record<string, string>>;
  /** A trusted workspace's `.toolcell/sandbox.Dockerfile`, which its sandbox sessions run the image of. */
  readonly sandboxDockerfile: string | undefined;
  /** The CPUs sandbox containers may run on (RuntimeOptions.sandboxCpus, canonical), or undefined for any. */
  readonly sandboxCpus: string | undefined;
  /** Where this runtime's shell commands run. */
  readonly sandbox: SandboxMode;
  /** The policy rules every scheduler of this runtime consults. */
  readonly policy: PolicyEngine;
  /** "Allow always" in chat: saves allow rules to ~/.toolcell/policies/allowed-in-chat.toml and applies them at once. */
  readonly alwaysAllow: { file: string; save(prefixes: string[]): Promise<void> };
  /** The OpenTelemetry sink, plus the one from the options: what schedulers of this runtime report to. */
  readonly telemetry: TelemetrySink;
  /** A scheduler over this runtime's registry, with its approval mode, telemetry and output limits. */
  /** A scheduler over the runtime's registry (or `registry`), approval mode, telemetry and output limits. */
  createScheduler(options?: Partial<SchedulerOptions>): Scheduler;
  /** Closers run by `close`, last registered first (shell sessions, MCP clients…). */
  onClose(closer: () => Promise<void>): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Resolves a workspace folder to its real path, or throws `invalid_workspace`. */
export async function resolveWorkspace(dir: string): Promise<WorkspaceInfo> {
  let root: string;
  let owner: { uid: number; gid: number };
  try {
    root = await realpath(dir);
    const info = await stat(root);
    if (!info.isDirectory()) throw new Error('not a directory');
    owner = { uid: info.uid, gid: info.gid };
  } catch (error) {
    throw new ToolcellError(ToolErrorType.INVALID_WORKSPACE, `Workspace ${JSON.stringify(dir)} is not an existing folder (${(error as Error).message}).`);
  }
  // What the file tools create belongs to the workspace's owner, as what its sandboxed commands create does.
  return { roots: [root], stateDir: join(root, '.toolcell'), owner };
}

/** Saved full outputs older than this many days are deleted when a runtime starts (`tools.savedOutputRetentionDays`). */
export const DEFAULT_SAVED_OUTPUT_RETENTION_DAYS = 7;

function savedOutputsFolder(workspace: WorkspaceInfo): string {
  return join(workspace.stateDir, 'tool-outputs');
}

/** Each saved output can be up to 64 MiB, so without this the folder only grows. A failure costs a warning, never the run. */
async function pruneSavedOutputs(workspace: WorkspaceInfo, days: number, onWarning: (message: string) => void): Promise<void> {
  if (days === 0) return;
  await pruneOldFiles(savedOutputsFolder(workspace), { maxAgeMs: days * 24 * 60 * 60 * 1000 }).catch((error: unknown) =>
    onWarning(`old saved outputs were not deleted: ${errorMessage(error)}`),
  );
}

/**
 * Builds the registry (built-in tools executing in a worker pool, the shell
 * tool, discovered and MCP tools) for one workspace.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const workspace = await resolveWorkspace(options.workspace);
  const root = workspace.roots[0]!;
  const onWarning = options.onWarning ?? ((message: string) => process.stderr.write(`toolcell: ${message}\n`));
  const settings = loadSettings({
    workspace: root,
    ...(options.settingsFile ? { settingsFile: options.settingsFile } : {}),
    ...(options.trustWorkspace ? { trustWorkspace: true } : {}),
  });
  for (const warning of settings.warnings) onWarning(warning);
  // Without --settings the workspace is trusted as settings say; with it, only by --trust-workspace.
  const workspaceTrusted = options.trustWorkspace === true || (options.settingsFile === undefined && settings.workspaceTrusted);
  const policy = await PolicyEngine.create([
    ...loadPolicySources({ workspace: root, workspaceTrusted, ...(options.policyFiles ? { files: options.policyFiles } : {}) }),
    ...(options.policy ? checkRules(options.policy, 'options.policy') : []),
  ]);
  await pruneSavedOutputs(workspace, settings.tools.savedOutputRetentionDays ?? DEFAULT_SAVED_OUTPUT_RETENTION_DAYS, onWarning);
  // Read on the host now; the values go to the sandbox session only, and are redacted from every result.
  const secrets = resolveLocalSecrets(settings.sandbox.secrets);
  for (const problem of secrets.problems) onWarning(problem);
  const redactor = SecretRedactor.of(secrets.values);
  const sandboxDockerfile = workspaceSandboxDockerfile(root, workspaceTrusted, onWarning);
  const sandbox = resolveSandboxMode(options.sandbox, settings, onWarning);
  if (options.sandboxRuntime !== undefined) {
    const { sandboxRuntime } = parseOptions(z.object({ sandboxRuntime: sandboxRuntimeSchema }), { sandboxRuntime: options.sandboxRuntime }, 'createRuntime');
    settings.sandbox = { ...settings.sandbox, runtime: sandboxRuntime };
  }
  if (settings.sandbox.runtime !== undefined && sandbox !== 'none') await assertRuntimeAvailable(settings.sandbox.runtime);
  const sandboxCpus =
    options.sandboxCpus !== undefined
      ? parseOptions(z.object({ sandboxCpus: cpuListSchema }), { sandboxCpus: options.sandboxCpus }, 'createRuntime').sandboxCpus
      : undefined;
  const registry = new ToolRegistry({ onWarning });
  const fileTimeoutMs = settings.tools.fileTimeoutMs;
  const pool = new WorkerPool({ ...(fileTimeoutMs !== undefined ? { callTimeoutMs: fileTimeoutMs } : {}), ...options.pool });
  const telemetry = combineSinks(new OtelTelemetrySink(), ...(options.telemetry ? [options.telemetry] : []));
  // Run last first: the telemetry sinks close after everything that reports to them.
  const closers: Array<() => Promise<void>> = [async () => telemetry.close?.(), () => pool.close()];

  const runtime: Runtime = {
    workspace,
    registry,
    pool,
    settings,
    redactor,
    sandboxSecrets: secrets.values,
    sandboxDockerfile,
    sandboxCpus,
    sandbox,
    telemetry,
    policy,
    alwaysAllow: {
      file: allowedInChatFile(),
      save: async (prefixes) => policy.addRules(await saveAllowedPrefixes(prefixes)),
    },
    createScheduler: (schedulerOptions = {}) =>
      new Scheduler({
        registry,
        approvalMode: options.approvalMode ?? 'default',
        telemetry,
        policy,
        output: { saveDir: savedOutputsFolder(workspace), workspace },
        ...(redactor ? { redact: (text: string) => redactor.redact(text) } : {}),
        ...schedulerOptions,
      }),
    onClose: (closer) => closers.push(closer),
    async close() {
      while (closers.length > 0) await closers.pop()!().catch(() => {});
    },
    [Symbol.asyncDispose]: () => runtime.close(),
  };

  try {
    for (const tool of await pool.createTools({ workspace })) registry.register(tool);
    // The host-side fetch is held to the sandbox's egress allowlist, and its connections go to the
    // same egress log as the proxy's (opened on the first one: most runs never fetch).
    let egressLog: EgressLog | undefined;
    closers.push(async () => egressLog?.close());
    registry.register(
      new WebFetchTool({
        allow: sandboxAllowList(settings.sandbox) ?? [],
        ...(options.webFetchSummarizer ? { summarize: options.webFetchSummarizer } : {}),
        onEgress: (event) => (egressLog ??= openEgressLog(localEgressLogFile())).write(event),
      }),
    );
    // One sandbox session per runtime, opened on the first command; fail closed (see ShellService.openSession).
    const shellSession = new LazyShellSession({
      sandbox,
      workspaceRoot: root,
      // No spare container: this runtime's one session is the only one its workspace gets.
      service: shellServiceOptions(settings, { dockerfile: sandboxDockerfile, cpuSet: sandboxCpus, warmPool: 0 }),
      ...(redactor ? { secrets: secrets.values } : {}),
    });
    closers.push(() => shellSession.close());
    const wallTimeoutMs = options.timeoutSeconds !== undefined ? options.timeoutSeconds * 1000 : undefined;
    registerShellTool(registry, {
      session: shellSession,
      workspace,
      ...(wallTimeoutMs !== undefined ? { wallTimeoutMs } : {}),
      ...(settings.shell.inactivityTimeoutMs !== undefined ? { inactivityTimeoutMs: settings.shell.inactivityTimeoutMs } : {}),
    });
    // Discovered and MCP tools; problems (an unreachable server…) are warnings, not failures.
    // `--timeout` bounds a discovered tool's call command like a shell command.
    const extensionSettings = wallTimeoutMs === undefined ? settings : { ...settings, tools: { ...settings.tools, callTimeoutMs: wallTimeoutMs } };
    const extensions = await registerExtensionTools({
      registry,
      settings: extensionSettings,
      workspace: root,
      commandRunner: shellCommandRunner(shellSession),
    });
    closers.push(() => extensions.close());
    for (const problem of extensions.problems) onWarning(problem);
  } catch (error) {
    await runtime.close();
    throw error;
  }
  return runtime;
}
