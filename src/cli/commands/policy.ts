import { Option, type Command } from 'commander';
import { isApprovalMode, type ApprovalMode } from '../../contracts/approval-mode.js';
import { SHELL_TOOL_NAME } from '../../contracts/tool-names.js';
import { errorMessage } from '../../errors.js';
import type { PolicyVerdict } from '../../policy/policy-engine.js';
import { describeRuleSource } from '../../policy/policy-rule.js';
import type { ToolKind } from '../../tools/tool.js';
import { EDIT_KINDS, READ_ONLY_KINDS } from '../../tools/tool.js';
import { EXIT_OK, EXIT_USAGE, exitCodeForSetUpFailure } from '../exit-codes.js';
import { approvalOption, policyOption, settingsOption, trustWorkspaceOption, workspaceOption } from '../options.js';

interface CheckOptions {
  tool: string;
  args: string;
  policy?: string[];
  approval: ApprovalMode;
  json?: boolean;
  headless?: boolean;
  mcpServer?: string;
  workspace: string;
  settings?: string;
  trustWorkspace?: boolean;
}

/** Registers `toolcell policy check`: what the policy decides about one call, and which rule decided. */
export function registerPolicyCommand(program: Command): void {
  const policy = program.command('policy').description('Inspect policy rules (TOML files of [[rule]] tables).');
  policy
    .command('check')
    .description('Print the decision (allow, deny or ask_user) the policy makes about one tool call, and the rule that made it.')
    .requiredOption('--tool <name>', 'the tool name, e.g. run_shell_command or mcp_github_create_issue')
    .option('--args <json>', 'the call\'s arguments as a JSON object, e.g. \'{"command":"git status"}\'', '{}')
    .addOption(policyOption())
    .addOption(approvalOption())
    .option('--json', 'print one JSON object: {decision, rule, reason, command?, tool, approvalMode, headless}')
    .option('--headless', 'decide as toolcell exec and serve do, where nobody can be asked: ask_user becomes deny')
    .addOption(new Option('--mcp-server <name>', 'the MCP server the tool comes from, for rules with mcpName'))
    .addOption(workspaceOption())
    .addOption(settingsOption())
    .addOption(trustWorkspaceOption())
    .addHelpText(
      'after',
      `
Rules are read as the other commands read them: ~/.toolcell/policies/*.toml,
the workspace's .toolcell/policies/*.toml when the workspace is trusted, then
each --policy file. When no rule matches, the approval mode decides; the rule
is then reported as null (for tools other than the built-in ones this assumes
the tool asks for confirmation, as MCP and discovered tools do unless trusted).

Exit codes:
  0    the decision was printed
  2    usage error, bad --args, or an invalid policy file (invalid_policy)

Examples:
  toolcell policy check --tool run_shell_command --args '{"command":"git status && rm -rf /"}'
  toolcell policy check --tool write_file --args '{"file_path":"a","content":""}' --approval plan --json`,
    )
    .action(async (options: CheckOptions) => {
      process.exitCode = await runCheck(options);
    });
}

async function runCheck(options: CheckOptions): Promise<number> {
  let args: unknown;
  try {
    args = JSON.parse(options.args);
  } catch {
    return usage('--args must be a JSON object');
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return usage('--args must be a JSON object');
  if (!isApprovalMode(options.approval)) return usage('--approval must be default, autoEdit, yolo or plan');
  let verdict: PolicyVerdict;
  try {
    // Loaded on use, so `--help` starts fast.
    const [{ loadSettings }, { loadPolicySources }, { PolicyEngine }] = await Promise.all([
      import('../../config/load-settings.js'),
      import('../../policy/policy-sources.js'),
      import('../../policy/policy-engine.js'),
    ]);
    const settings = loadSettings({
      workspace: options.workspace,
      ...(options.settings ? { settingsFile: options.settings } : {}),
      ...(options.trustWorkspace ? { trustWorkspace: true } : {}),
    });
    const workspaceTrusted = options.trustWorkspace === true || (options.settings === undefined && settings.workspaceTrusted);
    const engine = await PolicyEngine.create(
      loadPolicySources({ workspace: options.workspace, workspaceTrusted, ...(options.policy ? { files: options.policy } : {}) }),
    );
    verdict = await engine.decide({ toolName: options.tool, args, mode: options.approval, ...(options.mcpServer ? { mcpServer: options.mcpServer } : {}) });
  } catch (error) {
    process.stderr.write(`toolcell policy check: ${errorMessage(error)}\n`);
    return exitCodeForSetUpFailure(error);
  }
  const byMode = verdict.decision === 'default' ? modeDecision(options.tool, options.approval) : undefined;
  let decision = byMode?.decision ?? (verdict.decision as Exclude<PolicyVerdict['decision'], 'default'>);
  let reason = byMode ? `${byMode.reason} (${verdict.reason})` : verdict.reason;
  if (decision === 'ask_user' && options.headless) {
    decision = 'deny';
    reason = `${reason}; nobody can be asked (headless), so the call is refused`;
  }
  const rule = verdict.rule ?? null;
  if (options.json) {
    const out = {
      decision,
      rule,
      reason,
      ...(verdict.command !== undefined ? { command: verdict.command } : {}),
      tool: options.tool,
      approvalMode: options.approval,
      headless: options.headless === true,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    process.stdout.write(
      `decision: ${decision}\nrule:     ${rule ? describeRuleSource(rule) : byMode ? `none (approval mode ${options.approval})` : 'none (policy engine)'}\nreason:   ${reason}\n`,
    );
  }
  return EXIT_OK;
}

const BUILTIN_KINDS: Readonly<Record<string, ToolKind>> = {
  list_directory: 'read',
  read_file: 'read',
  read_many_files: 'read',
  glob: 'search',
  grep_search: 'search',
  search_file_content: 'search',
  write_file: 'edit',
  replace: 'edit',
  save_memory: 'edit',
  [SHELL_TOOL_NAME]: 'execute',
};

/** What the approval mode alone decides (scheduler.ts and approval.ts), for a tool known by name. */
function modeDecision(tool: string, mode: ApprovalMode): { decision: 'allow' | 'deny' | 'ask_user'; reason: string } {
  const kind = BUILTIN_KINDS[tool] ?? 'other';
  if (mode === 'plan')
    return READ_ONLY_KINDS.has(kind)
      ? { decision: 'allow', reason: 'plan mode runs read-only tools' }
      : { decision: 'deny', reason: `plan mode refuses ${kind} tools (policy_violation)` };
  if (mode === 'yolo') return { decision: 'allow', reason: 'yolo runs every call without asking' };
  if (READ_ONLY_KINDS.has(kind)) return { decision: 'allow', reason: 'read-only tools do not ask' };
  if (mode === 'autoEdit' && EDIT_KINDS.has(kind)) return { decision: 'allow', reason: 'autoEdit approves file edits' };
  return { decision: 'ask_user', reason: `the ${mode} approval mode asks before ${kind === 'other' ? 'this tool' : `${kind} tools`} run` };
}

function usage(message: string): number {
  process.stderr.write(`toolcell policy check: ${message}\n`);
  return EXIT_USAGE;
}
