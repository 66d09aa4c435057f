import { mkdir, readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { loadPolicyFile, parsePolicyText } from './load-policy-file.js';
import type { PolicyRule } from './policy-rule.js';
import { ALLOWED_IN_CHAT_FILE, userPoliciesDir } from './policy-sources.js';
import type { SimpleCommand } from './split-command.js';

/** A second word that names a subcommand (`git status`, `npm test`), not an option or a path. */
const SUBCOMMAND = /^[a-z][a-z0-9-]*$/u;

/**
 * The prefixes "allow always" means for a command: for each simple
 * command, its name and, when the next word is a subcommand, that word too
 * (`git status --short | wc -l` → `git status`, `wc`). Undefined when some
 * part cannot be judged with confidence, or writes a file or sets a
 * variable: nothing short of the whole command could be allowed then, so
 * the answer is remembered for the session only.
 */
export function alwaysAllowPrefixes(commands: readonly SimpleCommand[]): string[] | undefined {
  const prefixes = new Set<string>();
  for (const simple of commands) {
    if (simple.uncertain !== undefined || simple.words.length === 0) return undefined;
    if (simple.redirects.some((redirect) => redirect.writes) || simple.assignments.length > 0) return undefined;
    const [name, next] = simple.words;
    if (!name!.literal || /\s/u.test(name!.text)) return undefined;
    prefixes.add(next?.literal && SUBCOMMAND.test(next.text) ? `${name!.text} ${next.text}` : name!.text);
  }
  return prefixes.size > 0 ? [...prefixes] : undefined;
}

/** The file "allow always" writes to: `~/.toolcell/policies/allowed-in-chat.toml`. */
export function allowedInChatFile(homeDir?: string): string {
  return join(userPoliciesDir(homeDir), ALLOWED_IN_CHAT_FILE);
}

function ruleText(prefix: string): string {
  return `\n[[rule]]\nname = ${JSON.stringify(`allowed in chat: ${prefix}`)}\ntoolName = "run_shell_command"\ncommandPrefix = ${JSON.stringify(prefix)}\ndecision = "allow"\n`;
}

/**
 * Appends an allow rule per prefix (those not already there) to the file,
 * replacing it atomically (temp file + rename: a crash leaves the old file
 * or the new one, never half of it). Returns the rules added, checked as
 * the file will be read next time.
 */
export async function saveAllowedPrefixes(prefixes: readonly string[], options: { homeDir?: string } = {}): Promise<PolicyRule[]> {
  const dir = userPoliciesDir(options.homeDir);
  await mkdir(dir, { recursive: true });
  const real = await realpath(dir);
  const file = join(real, ALLOWED_IN_CHAT_FILE);
  const existing = loadPolicyFile(file, { required: false, origin: 'user' });
  const known = new Set(existing.flatMap((rule) => (rule.decision === 'allow' ? (rule.commandPrefixes ?? []).map((words) => words.join(' ')) : [])));
  const fresh = prefixes.filter((prefix) => !known.has(prefix));
  if (fresh.length === 0) return [];
  const before = existing.length > 0 ? await readFile(file, 'utf8') : '# Rules added by "allow always" in toolcell chat. Edit or delete freely.\n';
  const added = fresh.map(ruleText).join('');
  await writeFileAtomic({ roots: [real], stateDir: real }, file, before + added, { toolcellState: true });
  return parsePolicyText(before + added, file).slice(existing.length);
}
