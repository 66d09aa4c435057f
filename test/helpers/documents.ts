import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageRoot } from '../../src/paths.js';

/**
 * The project's documents as the checks of test/docs/ (and help-promises) read them: README.md,
 * SECURITY.md, ARCHITECTURE.md and every Markdown file under docs/ and deploy/, split
 * into what a reader sees as text, inline code and code blocks, with the
 * anchors GitHub gives their headings.
 */

export interface Document {
  /** Path relative to the package root, with `/` separators. */
  path: string;
  text: string;
}

/** Every document the checks cover. */
export function documents(): Document[] {
  const paths = ['README.md', 'SECURITY.md', 'ARCHITECTURE.md', ...markdownUnder('docs'), ...markdownUnder('deploy')];
  return paths.map((path) => ({ path, text: readFileSync(join(packageRoot, path), 'utf8') }));
}

function markdownUnder(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(packageRoot, folder), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.md')) found.push(relative(packageRoot, join(entry.parentPath, entry.name)).split('\\').join('/'));
  }
  return found.sort();
}

/** A line of a document, with its number (1-based) and whether it is inside a fenced code block. */
export interface Line {
  number: number;
  text: string;
  inCodeBlock: boolean;
}

/** The document's lines; fence lines themselves count as code. */
export function lines(text: string): Line[] {
  let fence: string | undefined;
  return text.split('\n').map((line, index) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === undefined && opening) {
      fence = opening[1]!;
      return { number: index + 1, text: line, inCodeBlock: true };
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence[0]!.repeat(fence.length)) && line.trim().replace(/[`~]/g, '') === '') fence = undefined;
      return { number: index + 1, text: line, inCodeBlock: true };
    }
    return { number: index + 1, text: line, inCodeBlock: false };
  });
}

/** The inline code spans of one line of prose (`a`, ``a ` b``), without their backticks. */
export function codeSpans(line: string): string[] {
  const spans: string[] = [];
  const pattern = /(`+)([\s\S]*?[^`])\1(?!`)/g;
  for (const match of line.matchAll(pattern)) spans.push(match[2]!.trim());
  return spans;
}

/** A line of prose with its code spans removed, so that a link shown as code is not followed. */
export function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, '');
}

/** Markdown links `[text](target)` of a line of prose (code spans removed first). */
export function links(line: string): string[] {
  const targets: string[] = [];
  for (const match of withoutCodeSpans(line).matchAll(/\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
  return targets;
}

/**
 * The anchors GitHub gives a document's headings: the heading's text as
 * rendered (links reduced to their text, code and emphasis marks dropped),
 * lower-cased, punctuation removed, spaces turned into hyphens; a repeated
 * anchor gets `-1`, `-2`…
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of lines(text)) {
    if (line.inCodeBlock) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line.text);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** GitHub's slug of a heading's Markdown text. */
export function slug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*)/g, '')
    .replace(/<[^>]+>/g, '');
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}
