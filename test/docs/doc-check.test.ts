/**
 * The documents keep their promises to a reader: every test file they name
 * as a claim's proof exists, every relative link (and #anchor) leads
 * somewhere, and every `toolcell …` flag they show is one that command's
 * `--help` lists. Failures name the document, the line and what is wrong.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/paths.js';
import { cliPath } from '../helpers/cli.js';

const execFileAsync = promisify(execFile);
const root = packageRoot;

/** The documents a reader is sent to: the top-level ones and everything under docs/ and deploy/. */
function documents(): string[] {
  const found = ['README.md', 'SECURITY.md', 'ARCHITECTURE.md'].map((name) => join(root, name)).filter((path) => existsSync(path));
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk(join(root, 'docs'));
  walk(join(root, 'deploy'));
  return found;
}

interface Line {
  file: string;
  number: number;
  text: string;
  /** Inside a fenced code block. */
  code: boolean;
}

function linesOf(file: string): Line[] {
  let code = false;
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((text, index) => {
      if (/^\s*```/.test(text)) {
        code = !code;
        return { file, number: index + 1, text, code: false };
      }
      return { file, number: index + 1, text, code };
    });
}

const where = (line: Line): string => `${relative(root, line.file)}:${line.number}`;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const line of linesOf(file)) {
    const heading = !line.code && /^#{1,6}\s+(.*)$/.exec(line.text);
    if (!heading) continue;
    const slug = headingSlug(heading[1]!);
    const seen = counts.get(slug) ?? 0;
    anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
    counts.set(slug, seen + 1);
  }
  return anchors;
}

test('every test file a document names exists', (t) => {
  const missing: string[] = [];
  for (const file of documents())
    for (const line of linesOf(file))
      for (const [path] of line.text.matchAll(/\btest\/[\w./-]+\.test\.ts\b/g)) if (!existsSync(join(root, path))) missing.push(`${where(line)}: ${path}`);
  t.deepEqual(missing, []);
});

test('every relative link and anchor in the documents resolves', (t) => {
  const broken: string[] = [];
  for (const file of documents())
    for (const line of linesOf(file)) {
      if (line.code) continue;
      for (const [, target] of line.text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue; // http:, https:, mailto:
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const destination = path === '' ? file : resolve(dirname(file), path);
        if (!existsSync(destination)) {
          broken.push(`${where(line)}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && destination.endsWith('.md') && !anchorsOf(destination).has(anchor))
          broken.push(`${where(line)}: ${target} (no heading makes #${anchor})`);
      }
    }
  t.deepEqual(broken, []);
});

/** The flags a `toolcell` (sub-)command's --help lists; undefined when the words name no command. */
async function helpFlags(words: string[]): Promise<Set<string> | undefined> {
  const { stdout } = await execFileAsync(process.execPath, [cliPath, ...words, '--help']).catch(() => ({ stdout: '' }));
  if (!/^Usage: toolcell/m.test(stdout)) return undefined;
  return new Set([...stdout.matchAll(/--[a-z][\w-]*/g)].map(([flag]) => flag));
}

test("every flag a document shows on a toolcell command is in that command's --help", async (t) => {
  const cache = new Map<string, Promise<Set<string> | undefined>>();
  const flagsOf = (words: string[]) => {
    const key = words.join(' ');
    if (!cache.has(key)) cache.set(key, helpFlags(words));
    return cache.get(key)!;
  };
  const unknown: string[] = [];
  for (const file of documents())
    for (const line of linesOf(file)) {
      // Commands as a reader would type them: in code blocks and in `inline code`.
      const commands = line.code ? [line.text] : [...line.text.matchAll(/`([^`]*toolcell [^`]*)`/g)].map(([, inline]) => inline!);
      for (const command of commands) {
        for (const [, invocation] of command.matchAll(/(?:^|[\s|;&(])(?:npx |sudo (?:npx )?)?toolcell ((?:[a-z][\w-]* ?){0,3}[^|;&)]*)/g)) {
          const words = invocation!.split(/\s+/).filter(Boolean);
          const subcommand = words.slice(0, 3).filter((word) => /^[a-z][\w-]*$/.test(word));
          // The deepest of `a b c`, `a b`, `a` that is a command.
          let flags: Set<string> | undefined;
          let used: string[] = [];
          for (let depth = subcommand.length; depth >= 1 && flags === undefined; depth--) {
            used = subcommand.slice(0, depth);
            flags = await flagsOf(used);
          }
          if (flags === undefined) continue;
          for (const [flag] of invocation!.matchAll(/(?<=\s|^)--[a-z][\w-]*/g))
            if (!flags.has(flag) && flag !== '--help') unknown.push(`${where(line)}: toolcell ${used.join(' ')} ${flag}`);
        }
      }
    }
  t.deepEqual(unknown, []);
});
