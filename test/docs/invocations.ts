import { codeSpans, lines, type Document } from '../helpers/documents.js';

/**
 * The `toolcell …` command lines a document shows, in code blocks and in
 * inline code, as shell words: `npx toolcell exec --approval yolo` is
 * `exec`, `--approval`, `yolo`. A line ends where the shell would end the
 * command (`|`, `&&`, `;`, a redirection, a comment); quoted words are
 * values, never flags. A `\|` between alternatives (Markdown tables write
 * `setup\|build` for `setup|build`) separates words without ending the line.
 */

export interface Word {
  text: string;
  quoted: boolean;
}

export interface Invocation {
  /** `document:line`. */
  where: string;
  /** The words after `toolcell`. */
  words: Word[];
  /** The invocation as written, for messages. */
  shown: string;
}

const TOOLCELL = /(?<![\w./:@$-])toolcell(?=[ \t])/g;

export function invocations(doc: Document): Invocation[] {
  const found: Invocation[] = [];
  const all = lines(doc.text);
  for (let index = 0; index < all.length; index++) {
    const line = all[index]!;
    const where = `${doc.path}:${line.number}`;
    if (line.inCodeBlock) {
      // A shell line continued with a trailing backslash is one command.
      let text = line.text;
      while (text.endsWith('\\') && all[index + 1]?.inCodeBlock) text = `${text.slice(0, -1)} ${all[++index]!.text}`;
      found.push(...inText(text, where));
    } else {
      for (const span of codeSpans(line.text)) found.push(...inText(span, where));
    }
  }
  return found;
}

function inText(text: string, where: string): Invocation[] {
  const found: Invocation[] = [];
  for (const match of text.matchAll(TOOLCELL)) {
    const rest = text.slice(match.index + match[0].length);
    const words = shellWords(rest);
    found.push({ where, words, shown: `toolcell ${words.map((word) => word.text).join(' ')}`.trim() });
  }
  return found;
}

/** Words up to the end of the command: quote-aware, stopping at `|`, `&&`, `;`, `>`, `<`, `#`, `)`. */
function shellWords(text: string): Word[] {
  const words: Word[] = [];
  let current = '';
  let quoted = false;
  let started = false;
  const finish = (): void => {
    if (started) words.push({ text: current, quoted });
    current = '';
    quoted = false;
    started = false;
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === "'" || char === '"') {
      const end = text.indexOf(char, i + 1);
      const value = end === -1 ? text.slice(i + 1) : text.slice(i + 1, end);
      current += value;
      quoted = true;
      started = true;
      i = end === -1 ? text.length : end;
    } else if (char === '\\' && text[i + 1] === '|') {
      finish(); // an alternative in a Markdown table: `setup\|build`
      i++;
    } else if (char === ' ' || char === '\t') {
      finish();
    } else if ('|;><)'.includes(char) || (char === '&' && text[i + 1] === '&') || (char === '#' && !started)) {
      break;
    } else {
      current += char;
      started = true;
    }
  }
  finish();
  return words;
}
