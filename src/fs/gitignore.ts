import { z } from 'zod';
import { parseOptions } from '../contracts/parse-options.js';
import ignore, { type Ignore } from 'ignore';
import { type WorkspaceInfo, workspaceInfoOption } from '../contracts/workspace-info.js';
import { readConfinedFile } from './read-confined.js';

/** .gitignore files larger than this are treated as absent. */
const MAX_RULES_BYTES = 1024 * 1024;

const gitignoreFilterOptionsSchema = z
  .strictObject({ workspace: workspaceInfoOption, root: z.string().min(1) })
  .refine((options) => options.workspace.roots.includes(options.root), { path: ['root'], error: 'must be one of options.workspace.roots' });

/**
 * Answers "would git ignore this path?" for paths below one workspace root,
 * the way git does: `.gitignore` files in the root and every directory below
 * it (deeper files override shallower ones, `!` re-includes), plus
 * `.git/info/exclude`; a path inside an ignored directory is ignored; `.git`
 * itself always is. Rule files are read lazily through confined reads, once.
 * Rules apply whether or not the root is a git repository.
 */
export class GitignoreFilter {
  readonly #workspace: WorkspaceInfo;
  readonly #root: string;
  readonly #rules = new Map<string, Promise<Ignore | null>>();
  readonly #directoryIgnored = new Map<string, Promise<boolean>>();

  /** `root` is the real path of the workspace root whose rules apply. */
  constructor(raw: z.input<typeof gitignoreFilterOptionsSchema>) {
    const options = parseOptions(gitignoreFilterOptionsSchema, raw, 'GitignoreFilter');
    this.#workspace = options.workspace;
    this.#root = options.root;
  }

  /** `relativePath` uses `/` separators and is relative to the root; '' (the root) is never ignored. */
  async isIgnored(relativePath: string, options: { directory: boolean }): Promise<boolean> {
    if (relativePath === '' || relativePath === '.') return false;
    const parts = relativePath.split('/');
    if (parts.includes('.git')) return true;
    for (let depth = 1; depth < parts.length; depth += 1) {
      if (await this.#isDirectoryIgnored(parts.slice(0, depth).join('/'))) return true;
    }
    return options.directory ? this.#isDirectoryIgnored(relativePath) : this.#evaluate(relativePath, false);
  }

  #isDirectoryIgnored(relativePath: string): Promise<boolean> {
    let known = this.#directoryIgnored.get(relativePath);
    if (known === undefined) {
      known = this.#evaluate(relativePath, true);
      this.#directoryIgnored.set(relativePath, known);
    }
    return known;
  }

  /** Applies the rule files of every ancestor directory, shallowest first; the last verdict wins. */
  async #evaluate(relativePath: string, directory: boolean): Promise<boolean> {
    const parts = relativePath.split('/');
    let ignored = false;
    for (let depth = 0; depth < parts.length; depth += 1) {
      const base = parts.slice(0, depth).join('/');
      const rules = await this.#rulesIn(base);
      if (rules === null) continue;
      const below = parts.slice(depth).join('/');
      const verdict = rules.test(directory ? `${below}/` : below);
      if (verdict.ignored) ignored = true;
      else if (verdict.unignored) ignored = false;
    }
    return ignored;
  }

  #rulesIn(directory: string): Promise<Ignore | null> {
    let rules = this.#rules.get(directory);
    if (rules === undefined) {
      rules = this.#loadRules(directory);
      this.#rules.set(directory, rules);
    }
    return rules;
  }

  async #loadRules(directory: string): Promise<Ignore | null> {
    const base = directory === '' ? this.#root : `${this.#root}/${directory}`;
    const sources = [`${base}/.gitignore`];
    if (directory === '') sources.push(`${base}/.git/info/exclude`);
    const texts: string[] = [];
    for (const source of sources) {
      const text = await this.#readRules(source);
      if (text !== null) texts.push(text);
    }
    return texts.length === 0 ? null : ignore({ allowRelativePaths: true }).add(texts.join('\n'));
  }

  async #readRules(path: string): Promise<string | null> {
    try {
      const { bytes } = await readConfinedFile(this.#workspace, path, { maxBytes: MAX_RULES_BYTES });
      return bytes.toString('utf8');
    } catch {
      // Missing, unreadable, too large, or a symlink leading out: no rules from it.
      return null;
    }
  }
}
