import type { ShellWord } from './shell-words.js';
import { programOptionRisk } from './program-options.js';
import { BASH_LIKE_SHELLS, OPAQUE_RUNNERS, OTHER_SHELLS, WRAPPERS, type WrapperSpec } from './wrapper-specs.js';

/**
 * What a wrapper command runs. A wrapper is a program that runs its
 * arguments as another command (`sudo rm …`) or as shell code
 * (`bash -c '…'`); rules must see that command, not only the wrapper.
 */
export interface WrapperSplit {
  /**
   * True when the wrapper is judged itself besides what it runs: it changes
   * who or how often (`sudo`, `xargs`, `find -exec`). False for wrappers that
   * only adjust the environment (`env`, `nohup`, `timeout`, `bash -c`).
   */
  checked: boolean;
  /** The commands it runs, as words (`find` may run several). */
  inner: ShellWord[][];
  /** Shell code it runs (`bash -c CODE`, `watch CMD`), parsed again. */
  code?: ShellWord;
  /** The shell that runs `code`, when it is not bash (`sh` is dash on Debian; `zsh` is not bash at all). */
  codeShell?: 'bash' | 'sh' | 'other';
  /** Variables it sets for what it runs (`env A=1 cmd`, `sudo A=1 cmd`). */
  assignments: string[];
  /** Set when what it runs cannot be known (`env -S STRING`, a shell reading a script, an option not followed). */
  uncertain?: string;
  /** The inner command runs with more words from the wrapper's input (`xargs`): it must not run commands itself. */
  appendsWords?: boolean;
}

/** Where the real wrappers live; `./env` or `/tmp/bash` is some other program and is judged as itself. */
const STANDARD_DIRS = /^\/(?:usr\/(?:local\/)?)?s?bin\/[^/]+$/u;

/** The wrapper's name when `word` names one of the standard programs (`env`, `/usr/bin/env`), else undefined. */
export function programName(word: ShellWord | undefined): string | undefined {
  if (!word?.literal) return undefined;
  if (!word.text.includes('/')) return word.text;
  return STANDARD_DIRS.test(word.text) ? word.text.slice(word.text.lastIndexOf('/') + 1) : undefined;
}

type Scan = { next: number; uncertain?: string; noCommand?: boolean };

/** Skips the wrapper's options; `next` is the index of the first word after them. */
function skipOptions(words: readonly ShellWord[], spec: WrapperSpec, name: string, start = 1): Scan {
  let i = start;
  while (i < words.length) {
    const word = words[i]!;
    if (!word.literal) return { next: i, uncertain: `an option or the command of ${name} is not a fixed word` };
    const text = word.text;
    if (text === '--') return { next: i + 1 };
    if (text === '-' && name === 'env') {
      i++;
      continue;
    }
    if (!text.startsWith('-') || text === '-') return { next: i };
    if (spec.uncertain?.some((option) => text === option || text.startsWith(`${option}=`) || (!option.startsWith('--') && text.startsWith(option))))
      return { next: i, uncertain: `${text} makes ${name} run a string or a shell the engine cannot see` };
    if (spec.noCommand?.includes(text)) return { next: i, noCommand: true };
    if (spec.numericOptions && /^-\d+$/u.test(text)) {
      i++;
      continue;
    }
    if (text.startsWith('--')) {
      const bare = text.split('=')[0]!;
      if (spec.long?.includes(bare)) i += text.includes('=') ? 1 : 2;
      else if (spec.longFlags?.includes(bare)) i++;
      else return { next: i, uncertain: `${name} option ${bare} is not one the engine knows` };
      continue;
    }
    // A cluster of short options: the first that takes an argument takes the rest of the cluster, or the next word.
    let takesNext = false;
    for (let c = 1; c < text.length; c++) {
      const letter = text[c]!;
      if (spec.noCommand?.includes(`-${letter}`)) return { next: i, noCommand: true };
      if (spec.uncertain?.includes(`-${letter}`)) return { next: i, uncertain: `-${letter} makes ${name} run a string or a shell the engine cannot see` };
      if (spec.short?.includes(letter)) {
        takesNext = c === text.length - 1;
        break;
      }
      if (!spec.flags?.includes(letter)) return { next: i, uncertain: `${name} option -${letter} is not one the engine knows` };
    }
    i += takesNext ? 2 : 1;
  }
  return { next: i };
}

/** `NAME=VALUE` words, as env reads them: any word with `=` after a non-empty name (`x.y=1` too). */
function takeAssignments(words: readonly ShellWord[], start: number): { next: number; assignments: string[] } {
  const assignments: string[] = [];
  let i = start;
  while (i < words.length && words[i]!.literal && words[i]!.text.indexOf('=') > 0) assignments.push(words[i++]!.text);
  return { next: i, assignments };
}

/** Options of `find`/`fd` that run a command up to `;` (or `+`). */
const EXEC_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  find: ['-exec', '-execdir', '-ok', '-okdir'],
  fd: ['-x', '--exec', '-X', '--exec-batch'],
  fdfind: ['-x', '--exec', '-X', '--exec-batch'],
};

function shellKind(name: string): 'bash' | 'sh' | 'other' {
  return name === 'bash' ? 'bash' : BASH_LIKE_SHELLS.has(name) ? 'sh' : 'other';
}

/**
 * `bash [options] -c CODE [name args…]`: the code. A shell without `-c`
 * runs a script file or reads its program from its input (`… | sh`,
 * `bash -s`, `bash <<<…`, `sh < file`): nothing the engine can see.
 */
function shellCode(words: readonly ShellWord[], start: number, name: string): WrapperSplit {
  const kind = shellKind(name);
  let sawC = false;
  for (let i = start; i < words.length; i++) {
    const word = words[i]!;
    if (!word.literal) {
      if (sawC) return { checked: false, inner: [], code: word, codeShell: kind, assignments: [] };
      return { checked: false, inner: [], assignments: [], uncertain: `an option of ${name} is not a fixed word` };
    }
    const text = word.text;
    if (text === '--version' || text === '--help') return { checked: true, inner: [], assignments: [] };
    if (text === '--' || text === '-') continue;
    if (text === '--posix') return { checked: false, inner: [], assignments: [], uncertain: `${name} --posix parses code differently` };
    if (text.startsWith('--')) {
      if (text === '--rcfile' || text === '--init-file') i++;
      continue;
    }
    if ((text.startsWith('-') || text.startsWith('+')) && text.length > 1) {
      if (text.startsWith('-') && text.slice(1).includes('c')) sawC = true;
      if (text.includes('H')) return { checked: false, inner: [], assignments: [], uncertain: `${name} ${text} turns on history expansion` };
      if (/[oO]$/u.test(text)) {
        const option = words[++i];
        // extglob, posix and compatibility levels change how bash parses the code; history expansion runs text from the history.
        if (!option?.literal || /extglob|posix|compat|extquote|expand_aliases|hist/u.test(option.text))
          return { checked: false, inner: [], assignments: [], uncertain: `${name} ${text} ${option?.text ?? ''} parses or runs code differently` };
      }
      continue;
    }
    if (sawC) return { checked: false, inner: [], code: word, codeShell: kind, assignments: [] };
    break;
  }
  if (sawC) return { checked: false, inner: [], assignments: [] };
  return { checked: false, inner: [], assignments: [], uncertain: `${name} without -c runs a script file or reads its program from its input` };
}

function untilTerminator(words: readonly ShellWord[], start: number): { command: ShellWord[]; end: number } {
  let end = start;
  while (end < words.length && !(words[end]!.literal && (words[end]!.text === ';' || words[end]!.text === '+'))) end++;
  return { command: words.slice(start, end), end };
}

/** A `{}` placeholder is replaced by a file name when the command runs. */
function withPlaceholders(command: readonly ShellWord[], placeholder: RegExp): ShellWord[] {
  return command.map((word) => (word.literal && placeholder.test(word.text) ? { text: word.text, literal: false } : word));
}

function fromSpec(words: readonly ShellWord[], name: string, spec: WrapperSpec): WrapperSplit {
  const scan = skipOptions(words, spec, name);
  if (scan.uncertain) return { checked: spec.checked, inner: [], assignments: [], uncertain: scan.uncertain };
  if (scan.noCommand) return { checked: true, inner: [], assignments: [] };
  let next = scan.next + (spec.positional ?? 0);
  let assignments: string[] = [];
  if (spec.assignments) ({ next, assignments } = takeAssignments(words, next));
  let inner = words.slice(next);
  if (name === 'xargs') inner = xargsReplace(words, scan.next, inner);
  if (inner.length === 0) {
    if (spec.whenEmpty === 'shell') return { checked: true, inner: [], assignments, uncertain: `${name} without a command runs an interactive shell` };
    if (spec.whenEmpty)
      return { checked: spec.checked, inner: [[{ text: spec.whenEmpty, literal: true }]], assignments, appendsWords: spec.appendsWords ?? false };
    // `env` alone prints the environment, `exec >log` only redirects: judged as themselves.
    return { checked: true, inner: [], assignments };
  }
  return { checked: spec.checked, inner: [inner], assignments, appendsWords: spec.appendsWords ?? false };
}

/** `xargs -I R` / `-i`: words holding the replacement string get input text. */
function xargsReplace(words: readonly ShellWord[], optionsEnd: number, inner: ShellWord[]): ShellWord[] {
  let replace: string | undefined;
  for (let i = 1; i < optionsEnd; i++) {
    const text = words[i]!.text;
    if (text === '-I' || text === '--replace') replace = words[i + 1]?.text ?? '{}';
    else if (text.startsWith('--replace=')) replace = text.slice(10);
    else if (/^-[^-]*[Ii]/u.test(text)) {
      const at = text.search(/[Ii]/u);
      replace = text.slice(at + 1) || (text[at] === 'I' ? words[i + 1]?.text : '{}');
    }
  }
  if (replace === undefined || replace === '') return inner;
  return inner.map((word) => (word.literal && word.text.includes(replace!) ? { text: word.text, literal: false } : word));
}

/**
 * What `words` runs, when its first word is a wrapper; undefined for any
 * other command. Only the standard programs count: `./sudo` or `/tmp/env`
 * are programs of unknown behaviour, judged as themselves.
 */
export function splitWrapper(words: readonly ShellWord[]): WrapperSplit | undefined {
  const name = programName(words[0]);
  if (name === undefined) return undefined;
  if (BASH_LIKE_SHELLS.has(name) || OTHER_SHELLS.has(name)) return shellCode(words, 1, name);
  if (name === 'busybox' || name === 'toybox') {
    const applet = programName(words[1]);
    if (words.length < 2 || words[1]!.text.startsWith('-')) return undefined;
    if (applet === undefined) return { checked: false, inner: [], assignments: [], uncertain: `the program ${name} runs is not a fixed word` };
    return { checked: false, inner: [words.slice(1)], assignments: [] };
  }
  const spec = WRAPPERS[name];
  if (spec) return fromSpec(words, name, spec);
  if (OPAQUE_RUNNERS.has(name)) return { checked: true, inner: [], assignments: [], uncertain: `${name} runs commands in ways the engine does not follow` };
  const execOptions = EXEC_OPTIONS[name];
  if (execOptions) {
    const inner: ShellWord[][] = [];
    for (let i = 1; i < words.length; i++) {
      const word = words[i]!;
      if (word.literal && execOptions.includes(word.text)) {
        const { command, end } = untilTerminator(words, i + 1);
        if (command.length > 0) inner.push(withPlaceholders(command, name === 'find' ? /\{\}/u : /\{[/.]*\}/u));
        i = end;
      }
    }
    return inner.length > 0 ? { checked: true, inner, assignments: [], appendsWords: name !== 'find' } : undefined;
  }
  return otherRunners(words, name);
}

/** Programs that run a command given by an option or as a string. */
function otherRunners(words: readonly ShellWord[], name: string): WrapperSplit | undefined {
  if (name === 'rg') {
    // ripgrep's --pre runs a program on every file it searches.
    const inner: ShellWord[][] = [];
    for (let i = 1; i < words.length; i++) {
      const word = words[i]!;
      if (word.literal && word.text === '--pre' && words[i + 1]) inner.push([words[++i]!]);
      else if (word.literal && word.text.startsWith('--pre=')) inner.push([{ text: word.text.slice(6), literal: true }]);
      else if (!word.literal) return { checked: true, inner, assignments: [], uncertain: 'an argument of rg is not a fixed word (it may be --pre)' };
    }
    return inner.length > 0 ? { checked: true, inner, assignments: [] } : undefined;
  }
  if (name === 'su' || name === 'runuser' || name === 'sg' || name === 'flock') return stringRunner(words, name);
  if (name === 'watch') {
    // watch joins its arguments and runs them with `sh -c`.
    const scan = skipOptions(words, { checked: true, short: 'nd', flags: 'btegcpx', long: ['--interval', '--differences'] }, name);
    const rest = words.slice(scan.next);
    if (scan.uncertain || rest.length === 0) return { checked: true, inner: [], assignments: [], ...(scan.uncertain ? { uncertain: scan.uncertain } : {}) };
    return {
      checked: true,
      inner: [],
      code: { text: rest.map((w) => w.text).join(' '), literal: rest.every((w) => w.literal) },
      codeShell: 'sh',
      assignments: [],
    };
  }
  // Ordinary programs that run a command when an option or their script says so (`sort --compress-program`, `sed 'e …'`).
  const risk = programOptionRisk(words, name);
  return risk === undefined ? undefined : { checked: true, inner: [], assignments: [], uncertain: risk };
}

/** `su -c CODE`, `runuser -u USER -- cmd`, `sg GROUP CMD`, `flock FILE -c CODE` / `flock FILE cmd…`. */
function stringRunner(words: readonly ShellWord[], name: string): WrapperSplit {
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (!word.literal) return { checked: true, inner: [], assignments: [], uncertain: `an argument of ${name} is not a fixed word` };
    if ((word.text === '-c' || word.text === '--command') && words[i + 1])
      return { checked: true, inner: [], code: words[i + 1]!, codeShell: 'sh', assignments: [] };
    if (word.text.startsWith('--command='))
      return { checked: true, inner: [], code: { text: word.text.slice(10), literal: true }, codeShell: 'sh', assignments: [] };
  }
  if (name === 'flock') {
    const scan = skipOptions(
      words,
      {
        checked: true,
        short: 'wE',
        flags: 'sexunoF',
        long: ['--wait', '--timeout', '--conflict-exit-code'],
        longFlags: ['--shared', '--exclusive', '--unlock', '--nonblock', '--nb', '--close', '--no-fork', '--verbose'],
      },
      name,
    );
    if (scan.uncertain) return { checked: true, inner: [], assignments: [], uncertain: scan.uncertain };
    const inner = words.slice(scan.next + 1);
    return inner.length > 0 ? { checked: true, inner: [inner], assignments: [] } : { checked: true, inner: [], assignments: [] };
  }
  if (name === 'runuser') {
    const dashes = words.findIndex((word) => word.text === '--');
    if (dashes > 0 && dashes < words.length - 1) return { checked: true, inner: [words.slice(dashes + 1)], assignments: [] };
  }
  if (name === 'sg' && words.length > 2) {
    const rest = words.slice(2);
    return {
      checked: true,
      inner: [],
      code: { text: rest.map((w) => w.text).join(' '), literal: rest.every((w) => w.literal) },
      codeShell: 'sh',
      assignments: [],
    };
  }
  return { checked: true, inner: [], assignments: [], uncertain: `${name} without -c runs an interactive shell` };
}
