import test from 'ava';
import { runCli } from '../helpers/cli.js';
import { helpTree } from '../helpers/cli-help.js';
import { documents } from '../helpers/documents.js';
import { useTempWorkspace } from '../helpers/workspace.js';

/**
 * What people read about the tools (every --help, the chat banner and its
 * /help and /approval lines, README.md, SECURITY.md, ARCHITECTURE.md and
 * every page of docs/) must only promise
 * tools that the registry has. A text that names one of Gemini CLI's tools,
 * or a kind of tool (fetching), while `toolcell tools` lists none, is a
 * promise the model and the person will find broken (`tool_not_registered`).
 */

/** Gemini CLI's tool names: naming one promises that toolcell has it. */
const GEMINI_CLI_TOOL_NAMES = [
  'activate_skill',
  'ask_user',
  'complete_task',
  'enter_plan_mode',
  'exit_plan_mode',
  'get_internal_docs',
  'glob',
  'google_web_search',
  'grep_search',
  'invoke_agent',
  'list_directory',
  'list_mcp_resources',
  'read_file',
  'read_many_files',
  'read_mcp_resource',
  'replace',
  'run_shell_command',
  'save_memory',
  'search_file_content',
  'take_snapshot',
  'update_topic',
  'web_fetch',
  'write_file',
  'write_todos',
];

/** Words that promise a tool of some kind (in help texts and the banner, where they describe what the model can do). */
const KIND_WORDS: Array<{ pattern: RegExp; kind: string }> = [{ pattern: /\b(fetch(es|ed|ing)?|URLs? to fetch|web pages?)\b/i, kind: 'fetch' }];

interface RegisteredTool {
  name: string;
  kind: string;
}

async function registeredTools(workspace: string): Promise<RegisteredTool[]> {
  const result = await runCli(['tools', '-w', workspace, '--sandbox', 'none']);
  if (result.code !== 0) throw new Error(`toolcell tools failed: ${result.stderr}`);
  return result.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [name = '', kind = ''] = line.trim().split(/\s+/);
      return { name, kind };
    });
}

/** What `toolcell chat` prints without a terminal: its banner, /help, and every approval mode's description. */
async function chatTexts(workspace: string): Promise<string> {
  const result = await runCli(['chat', '-w', workspace, '--sandbox', 'none'], {
    env: { GEMINI_API_KEY: 'k', GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9' },
    input: '/help\n/approval autoEdit\n/approval yolo\n/approval plan\n/approval default\n/approval\n/quit\n',
  });
  if (result.code !== 0) throw new Error(`toolcell chat exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/**
 * `ask_user` is also one of the policy decisions (`allow`, `deny`, `ask_user`), a spelling the
 * policy file format fixes. Where it stands near words of that meaning it promises no tool.
 */
function withoutPolicyDecisions(text: string): string {
  return text.replace(/ask_user/g, (word, offset: number) =>
    /deny|decision|policy|allow|rule/i.test(text.slice(Math.max(0, offset - 200), offset + 200)) ? '' : word,
  );
}

function brokenPromises(raw: string, tools: RegisteredTool[], options: { kindWords: boolean }): string[] {
  const text = withoutPolicyDecisions(raw);
  const names = new Set(tools.map((tool) => tool.name));
  const kinds = new Set(tools.map((tool) => tool.kind));
  const broken: string[] = [];
  for (const name of GEMINI_CLI_TOOL_NAMES) {
    if (new RegExp(`\\b${name}\\b`).test(text) && !names.has(name)) broken.push(`names the tool ${name}`);
  }
  if (options.kindWords) {
    for (const { pattern, kind } of KIND_WORDS) {
      const match = pattern.exec(text);
      if (match && !kinds.has(kind)) broken.push(`says "${match[0]}", but no tool of kind ${kind} is registered`);
    }
  }
  return broken;
}

test('help texts, the chat banner and the docs promise only tools the registry has', async (t) => {
  const ws = useTempWorkspace(t);
  const tools = await registeredTools(ws.root);
  t.true(
    tools.some((tool) => tool.name === 'read_file'),
    'the tool list was read',
  );

  // Every command's --help, a few at a time.
  const helpTexts = new Map([...(await helpTree()).values()].map((help) => [['toolcell', ...help.path].join(' '), help.text]));
  for (const command of ['toolcell run', 'toolcell chat', 'toolcell sandbox build']) t.true(helpTexts.has(command), `${command} --help is checked`);

  const problems: string[] = [];
  for (const [command, help] of helpTexts) {
    for (const problem of brokenPromises(help, tools, { kindWords: true })) problems.push(`${command} --help ${problem}`);
  }
  for (const problem of brokenPromises(await chatTexts(ws.root), tools, { kindWords: true })) problems.push(`the chat banner ${problem}`);
  const docs = documents();
  for (const doc of ['README.md', 'SECURITY.md', 'docs/tools.md'])
    t.true(
      docs.some((read) => read.path === doc),
      `${doc} is checked`,
    );
  for (const doc of docs) {
    for (const problem of brokenPromises(doc.text, tools, { kindWords: false })) problems.push(`${doc.path} ${problem}`);
  }
  t.deepEqual(problems, []);
});
