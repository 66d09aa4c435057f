import type { ShellWord } from './shell-words.js';

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
  /** Variables it sets for what it runs (`env A=1 cmd`, `sudo A=1 cmd`). */
  assignments: string[];
  /** Set when what it runs cannot be known (`env -S STRING`, a variable where an option or the command should be). */
  uncertain?: string;
}

interface OptionSpec {
  /** Short options that take an argument (attached or next word). */
  short?: string;
  /** Long options that take an argument when not written `--name=value`. */
  long?: readonly string[];
  /** Options that make the wrapper run a shell string, never a command (`env -S`). */
  uncertain?: readonly string[];
  /** Options after which nothing is run (`command -v`, `sudo -l`). */
  noCommand?: readonly string[];
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/u;
/** Where the real wrappers live; `./env` or `/tmp/bash` is some other program and is judged as itself. */
const STANDARD_DIRS = /^\/(?:usr\/(?:local\/)?)?s?bin\/[^/]+$/u;

/** The wrapper's name when `word` names one of the standard programs (`env`, `/usr/bin/env`), else undefined. */
function programName(word: ShellWord | undefined): string | undefined {
  if (!word?.literal) return undefined;
  if (!word.text.includes('/')) return word.text;
  return STANDARD_DIRS.test(word.text) ? word.text.slice(word.text.lastIndexOf('/') + 1) : undefined;
}

type Scan = { next: number; uncertain?: string; noCommand?: boolean };

/** Skips the wrapper's options; `next` is the index of the first word after them. */
function skipOptions(words: readonly ShellWord[], spec: OptionSpec, start = 1): Scan {
  let i = start;
  while (i < words.length) {
    const word = words[i]!;
    if (!word.literal) return { next: i, uncertain: 'an option or command of a wrapper is not a fixed word' };
    const text = word.text;
    if (text === '--') return { next: i + 1 };
    if (!text.startsWith('-') || text === '-') return { next: i };
    if (spec.uncertain?.some((option) => text === option || text.startsWith(`${option}=`) || (!option.startsWith('--') && text.startsWith(option))))
      return { next: i, uncertain: `${text} makes the wrapper split a string into a command` };
    if (spec.noCommand?.includes(text)) return { next: i, noCommand: true };
    if (text.startsWith('--')) {
      i += !text.includes('=') && spec.long?.includes(text) ? 2 : 1;
      continue;
    }
    // A cluster of short options: the first that takes an argument takes the rest of the cluster, or the next word.
    let takesNext = false;
    for (let c = 1; c < text.length; c++) {
      if (spec.short?.includes(text[c]!)) {
        takesNext = c === text.length - 1;
        break;
      }
    }
    i += takesNext ? 2 : 1;
  }
  return { next: i };
}

function takeAssignments(words: readonly ShellWord[], start: number): { next: number; assignments: string[] } {
  const assignments: string[] = [];
  let i = start;
  while (i < words.length && words[i]!.literal && ASSIGNMENT.test(words[i]!.text)) assignments.push(words[i++]!.text);
  return { next: i, assignments };
}

/** Wrappers that run the rest of their words as a command after some options. */
const COMMAND_WRAPPERS: Readonly<Record<string, OptionSpec & { checked: boolean; skipAfterOptions?: number; assignments?: boolean; default?: string }>> = {
  env: { checked: false, short: 'uCS', long: ['--unset', '--chdir'], uncertain: ['-S', '--split-string'], assignments: true },
  nohup: { checked: false },
  nice: { checked: false, short: 'n', long: ['--adjustment'] },
  ionice: { checked: false, short: 'cnp', long: ['--class', '--classdata'] },
  timeout: { checked: false, short: 'sk', long: ['--signal', '--kill-after'], skipAfterOptions: 1 },
  stdbuf: { checked: false, short: 'ioe', long: ['--input', '--output', '--error'] },
  setsid: { checked: false },
  time: { checked: false, short: 'fo', long: ['--format', '--output'] },
  command: { checked: false, noCommand: ['-v', '-V'] },
  builtin: { checked: false },
  exec: { checked: false, short: 'a' },
  coproc: { checked: false },
  sudo: {
    checked: true,
    short: 'ughpCDrtTU',
    long: ['--user', '--group', '--host', '--prompt', '--close-from', '--chdir', '--role', '--type', '--other-user'],
    noCommand: ['-e', '--edit', '-l', '--list', '-v', '--validate', '-k', '-K'],
    assignments: true,
  },
  doas: { checked: true, short: 'uC' },
  xargs: {
    checked: true,
    short: 'adEILnPs',
    long: ['--arg-file', '--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    default: 'echo',
  },
};

/** Options of `find`/`fd` that run a command up to `;` (or `+`). */
const EXEC_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  find: ['-exec', '-execdir', '-ok', '-okdir'],
  fd: ['-x', '--exec', '-X', '--exec-batch'],
  fdfind: ['-x', '--exec', '-X', '--exec-batch'],
};

const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'busybox']);

/** `bash [options] -c CODE [name args…]`: the code, or undefined when no `-c` (a script or stdin: judged as `bash` itself). */
function shellCode(words: readonly ShellWord[]): WrapperSplit | undefined {
  let start = 1;
  if (programName(words[0]) === 'busybox') {
    if (!SHELLS.has(programName(words[1]) ?? '') || programName(words[1]) === 'busybox') return undefined;
    start = 2;
  }
  let sawC = false;
  for (let i = start; i < words.length; i++) {
    const word = words[i]!;
    if (!word.literal) return sawC ? { checked: false, inner: [], code: word, assignments: [] } : undefined;
    const text = word.text;
    if (text === '--') continue;
    if (text.startsWith('--')) {
      if (text === '--rcfile' || text === '--init-file') i++;
      continue;
    }
    if ((text.startsWith('-') || text.startsWith('+')) && text.length > 1) {
      if (text.startsWith('-') && text.slice(1).includes('c')) sawC = true;
      if (/[oO]$/u.test(text)) i++;
      continue;
    }
    return sawC ? { checked: false, inner: [], code: word, assignments: [] } : undefined;
  }
  return sawC ? { checked: false, inner: [], assignments: [] } : undefined;
}

function untilTerminator(words: readonly ShellWord[], start: number): { command: ShellWord[]; end: number } {
  let end = start;
  while (end < words.length && !(words[end]!.literal && (words[end]!.text === ';' || words[end]!.text === '+'))) end++;
  return { command: words.slice(start, end), end };
}

/**
 * What `words` runs, when its first word is a wrapper; undefined for any
 * other command. Only the standard programs count: `./sudo` or `/tmp/env`
 * are programs of unknown behaviour, judged as themselves.
 */
export function splitWrapper(words: readonly ShellWord[]): WrapperSplit | undefined {
  const name = programName(words[0]);
  if (name === undefined) return undefined;
  if (SHELLS.has(name)) return shellCode(words);
  const spec = COMMAND_WRAPPERS[name];
  if (spec) {
    const scan = skipOptions(words, spec);
    if (scan.uncertain) return { checked: spec.checked, inner: [], assignments: [], uncertain: scan.uncertain };
    if (scan.noCommand) return { checked: true, inner: [], assignments: [] };
    let next = scan.next + (spec.skipAfterOptions ?? 0);
    let assignments: string[] = [];
    if (spec.assignments) ({ next, assignments } = takeAssignments(words, next));
    const inner = words.slice(next);
    if (inner.length === 0) {
      if (spec.default) return { checked: spec.checked, inner: [[{ text: spec.default, literal: true }]], assignments };
      // `env` alone prints the environment, `exec >log` only redirects: judged as themselves.
      return { checked: true, inner: [], assignments };
    }
    return { checked: spec.checked, inner: [inner], assignments };
  }
  const execOptions = EXEC_OPTIONS[name];
  if (execOptions) {
    const inner: ShellWord[][] = [];
    for (let i = 1; i < words.length; i++) {
      const word = words[i]!;
      if (word.literal && execOptions.includes(word.text)) {
        const { command, end } = untilTerminator(words, i + 1);
        if (command.length > 0) inner.push(command);
        i = end;
      }
    }
    return inner.length > 0 ? { checked: true, inner, assignments: [] } : undefined;
  }
  if (name === 'rg') {
    // ripgrep's --pre runs a program on every file it searches.
    const inner: ShellWord[][] = [];
    for (let i = 1; i < words.length; i++) {
      const word = words[i]!;
      if (word.literal && word.text === '--pre' && words[i + 1]) inner.push([words[++i]!]);
      else if (word.literal && word.text.startsWith('--pre=')) inner.push([{ text: word.text.slice(6), literal: true }]);
    }
    return inner.length > 0 ? { checked: true, inner, assignments: [] } : undefined;
  }
  if (name === 'su' || name === 'runuser') {
    for (let i = 1; i < words.length; i++) {
      const word = words[i]!;
      if (word.literal && (word.text === '-c' || word.text === '--command') && words[i + 1])
        return { checked: true, inner: [], code: words[i + 1]!, assignments: [] };
      if (word.literal && word.text.startsWith('--command='))
        return { checked: true, inner: [], code: { text: word.text.slice(10), literal: true }, assignments: [] };
    }
    return undefined;
  }
  if (name === 'watch') {
    // watch joins its arguments and runs them with `sh -c`.
    const scan = skipOptions(words, { short: 'nd', long: ['--interval', '--differences'] });
    const rest = words.slice(scan.next);
    if (scan.uncertain || rest.length === 0) return { checked: true, inner: [], assignments: [], ...(scan.uncertain ? { uncertain: scan.uncertain } : {}) };
    return { checked: true, inner: [], code: { text: rest.map((w) => w.text).join(' '), literal: rest.every((w) => w.literal) }, assignments: [] };
  }
  return undefined;
}
