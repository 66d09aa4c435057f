import { z } from 'zod';
import { sandboxRuntimeSchema } from '../contracts/sandbox-runtime.js';
import { AllowList } from '../egress/allow-list.js';
import { secretNameProblem } from '../secrets/secret-rules.js';

/**
 * The shape of `.toolcell/settings.json`. Every object is strict: an unknown
 * key is reported (usually a typo) instead of being silently ignored.
 */

const nonEmpty = z.string().min(1, 'must be a non-empty string');
const positiveMs = z
  .number()
  .int()
  .positive()
  .max(24 * 60 * 60 * 1000);

/** One MCP server: exactly one of `command` (stdio) or `url` (Streamable HTTP). */
export const mcpServerSettingsSchema = z
  .strictObject({
    /** stdio: the executable to start. */
    command: nonEmpty.optional(),
    args: z.array(z.string()).optional(),
    /** Extra environment for a stdio server. Nothing else from the host leaks except PATH/HOME/LANG-style basics. */
    env: z.record(z.string(), z.string()).optional(),
    /** Working directory of a stdio server; relative paths resolve against the workspace. */
    cwd: nonEmpty.optional(),
    /** Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /** Gemini CLI's spelling of `url` for Streamable HTTP servers; accepted as an alias. */
    httpUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** Per-request timeout in milliseconds (connect, list, call). */
    timeout: positiveMs.optional(),
    /** Skip confirmation for this server's tools. */
    trust: z.boolean().optional(),
    /** Only these server tool names are registered. */
    includeTools: z.array(nonEmpty).optional(),
    /** These server tool names are never registered; wins over includeTools. */
    excludeTools: z.array(nonEmpty).optional(),
    description: z.string().optional(),
  })
  .superRefine((server, ctx) => {
    const transports = [server.command, server.url, server.httpUrl].filter((value) => value !== undefined).length;
    if (transports !== 1) {
      ctx.addIssue({ code: 'custom', message: 'exactly one of command (stdio) or url (Streamable HTTP) is required' });
    }
    if (server.command === undefined) {
      for (const key of ['args', 'env', 'cwd'] as const) {
        if (server[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `${key} only applies to stdio servers (command)` });
      }
    } else if (server.headers !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['headers'], message: 'headers only apply to HTTP servers (url)' });
    }
  });

export const toolsSettingsSchema = z.strictObject({
  /** Prints a JSON array of FunctionDeclarations (or `{functionDeclarations: [...]}`). */
  discoveryCommand: nonEmpty.optional(),
  /** Runs one discovered tool: gets the tool name as its argument and the params as JSON on stdin. */
  callCommand: nonEmpty.optional(),
  /** Skip confirmation for discovered tools. They still run in the sandbox. */
  discoveryTrusted: z.boolean().optional(),
  /** Limit for the discovery command (default 60 s). */
  discoveryTimeoutMs: positiveMs.optional(),
  /** Limit for one call command (default 300 s). */
  callTimeoutMs: positiveMs.optional(),
  /**
   * Wall-clock limit of one built-in file tool call (read_file, grep_search,
   * …), default 120 s: past it the call ends with `execution_timeout` and its
   * worker thread is replaced, whatever it was waiting on.
   */
  fileTimeoutMs: positiveMs.optional(),
  /**
   * Days a saved full output (.toolcell/tool-outputs) is kept: older ones are
   * deleted when a runtime starts in the workspace. 0 keeps them all. Default 7.
   */
  savedOutputRetentionDays: z.number().int().min(0).max(36_500).optional(),
});

/** Each entry must parse as the egress proxy reads it (host, *.domain, IP or CIDR, optional :port). */
function checkAllowEntries(entries: string[], context: z.RefinementCtx): void {
  try {
    new AllowList(entries);
  } catch (error) {
    context.addIssue({ code: 'custom', message: (error as Error).message.replace(/^sandbox\.network\.allow: /, '') });
  }
}

/** Where one secret's value comes from on the host. */
const secretSourceSchema = z.union(
  [
    z.strictObject({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name' }) }),
    z.strictObject({
      file: z.string().refine((path) => path.startsWith('/') || path.startsWith('~/'), { error: 'must be an absolute path or start with ~/' }),
    }),
  ],
  { error: 'must be {"env": "HOST_VARIABLE"} or {"file": "/path/to/file"}' },
);

const secretsSchema = z.record(z.string(), secretSourceSchema).superRefine((secrets, context) => {
  for (const name of Object.keys(secrets)) {
    const problem = secretNameProblem(name);
    if (problem) context.addIssue({ code: 'custom', path: [name], message: problem });
  }
});

export const sandboxSettingsSchema = z.strictObject({
  /**
   * Where shell commands and discovered tools run (the `--sandbox` flag wins):
   * `docker`, `none` (the host, no isolation: must be chosen by name), or
   * `auto` (docker, or refuse to run commands).
   */
  mode: z.enum(['docker', 'none', 'auto']).optional(),
  /** Docker image for the sandbox. */
  image: nonEmpty.optional(),
  /**
   * What the sandbox may reach on the network: `"none"` (the default: no
   * network at all), or `{"allow": [...]}`: only through toolcell's egress
   * proxy, to the listed host names, `*.domain`s, IP addresses or CIDR ranges,
   * each with an optional `:port` (default 80 and 443). An untrusted
   * workspace's file may narrow the user's list, never widen it.
   */
  network: z
    .union([z.literal('none'), z.strictObject({ allow: z.array(nonEmpty).max(1000).superRefine(checkAllowEntries) })], {
      error: 'must be "none" or {"allow": [host, ...]}',
    })
    .optional(),
  /**
   * The OCI runtime of the sandbox's containers (the `--runtime` flag wins):
   * `runsc` for gVisor (set it up with `toolcell sandbox setup --runtime
   * runsc`), `runc`, or another the engine has. Default: the engine's
   * default (runc). A workspace's own file may only ask for a stronger one
   * (runsc over runc), never a weaker one.
   */
  runtime: sandboxRuntimeSchema.optional(),
  /**
   * Secrets for sandboxed commands: environment variables every command (and
   * discovered tool) of the sandbox gets, by name, with the value taken on
   * the host from `{"env": "HOST_VARIABLE"}` or `{"file": "/path"}`. Never
   * in the prompt, the model's answers, logs or saved outputs: a command
   * that prints one (or its base64, hex, URL or JSON form) shows
   * `[REDACTED:NAME]`. Ignored in an untrusted workspace's own file.
   */
  secrets: secretsSchema.optional(),
});

export const shellSettingsSchema = z.strictObject({
  /** Minimum time between two live-output updates of a command (Gemini CLI uses 1000: more often redraws the chat for little news). */
  liveUpdateIntervalMs: z.number().int().min(0).max(60_000).optional(),
  /** A command that prints nothing for this long is ended; 0 disables it (default 300 000). */
  inactivityTimeoutMs: z
    .number()
    .int()
    .min(0)
    .max(24 * 60 * 60 * 1000)
    .optional(),
  /** Size cap of a command's saved full output in .toolcell/tool-outputs; past it the file says where it was cut (default 64 MiB). */
  savedOutputMaxBytes: z.number().int().min(1024).optional(),
});

export const settingsSchema = z.strictObject({
  $schema: z.string().optional(),
  tools: toolsSettingsSchema.optional(),
  mcpServers: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'server names use letters, digits, _ . - (at most 64)'), mcpServerSettingsSchema).optional(),
  sandbox: sandboxSettingsSchema.optional(),
  shell: shellSettingsSchema.optional(),
  /**
   * Workspaces (absolute paths; exactly these folders, not their subfolders) whose own settings file
   * is applied in full. Read only from the user's file or a `--settings`
   * file: a workspace cannot vouch for itself.
   */
  trustedWorkspaces: z.array(z.string().startsWith('/', 'must be an absolute path')).optional(),
});

export type McpServerSettings = z.infer<typeof mcpServerSettingsSchema>;
export type ToolsSettings = z.infer<typeof toolsSettingsSchema>;
export type SandboxSettings = z.infer<typeof sandboxSettingsSchema>;
export type SandboxNetworkSettings = NonNullable<SandboxSettings['network']>;

/** The egress allowlist the sandbox settings name, or undefined when the sandbox has no network (`"none"` or unset). */
export function sandboxAllowList(sandbox: SandboxSettings): readonly string[] | undefined {
  return sandbox.network === undefined || sandbox.network === 'none' ? undefined : sandbox.network.allow;
}
export type ShellSettings = z.infer<typeof shellSettingsSchema>;
/** One settings file, validated. */
export type SettingsFile = z.infer<typeof settingsSchema>;

/** The effective settings: the files merged, plus where each value came from. */
export interface Settings {
  tools: ToolsSettings;
  mcpServers: Record<string, McpServerSettings>;
  sandbox: SandboxSettings;
  shell: ShellSettings;
  /** The files that were read, lowest precedence first. */
  sources: string[];
  /**
   * Whether the workspace's own settings file was applied in full. When it
   * was not, the settings that could run host programs, send host secrets,
   * skip confirmations or change the sandbox image were left out of it.
   */
  workspaceTrusted: boolean;
  /** What the user should know about how the files were applied (ignored settings). */
  warnings: string[];
}
