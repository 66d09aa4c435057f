import { awkRisk } from './awk-program.js';
import { gitRisk } from './git-runners.js';
import { abbreviates, attachedValue, optionName } from './long-options.js';
import { sedScriptRisk } from './sed-script.js';
import type { ShellWord } from './shell-words.js';

/**
 * Options with which an ordinary program runs another program or shell
 * code: `sort --compress-program=sh` feeds sort's data to sh, `tar
 * --to-command`/`--checkpoint-action=exec=`, `rsync -e`, `man -P`, `make
 * --eval`, `zip -TT`, `wget --use-askpass`, `ssh -o ProxyCommand=`. Long options count in every
 * abbreviation getopt accepts (`--compress-prog`); an exact match of a
 * harmless option that starts the same way does not (`tar --checkpoint=1`).
 */
interface OptionRunner {
  long: readonly string[];
  /** Short options that do, anywhere in a cluster of short options. */
  short?: string;
  /** Harmless long options that abbreviate nothing here (`--checkpoint`). */
  exact?: readonly string[];
  /** Words that do, their value attached or not (`zip -TT cmd`, `-TTcmd`). */
  words?: readonly string[];
  /** `-o KEY=VALUE` settings (ssh) whose key runs a command or loads code. */
  settings?: RegExp;
  /** Old-style tar: the first word's letters are options even without a dash (`tar xIf …`). */
  bundled?: true;
}

const SSH_SETTINGS = /^\s*(?:ProxyCommand|LocalCommand|KnownHostsCommand|PermitLocalCommand|Match|PKCS11Provider|SecurityKeyProvider)\b/iu;

const OPTION_RUNNERS: Readonly<Record<string, OptionRunner>> = {
  sort: { long: ['--compress-program'] },
  tar: {
    long: ['--to-command', '--use-compress-program', '--checkpoint-action', '--info-script', '--new-volume-script', '--rsh-command', '--rmt-command'],
    short: 'IF',
    exact: ['--checkpoint'],
    bundled: true,
  },
  rsync: { long: ['--rsh', '--rsync-path'], short: 'e' },
  man: { long: ['--pager', '--html'], short: 'PH' },
  make: { long: ['--eval'], short: 'E' },
  zip: { long: ['--unzip-command'], words: ['-TT'] },
  // wget -e runs a wgetrc command, and `use_askpass` names a program.
  wget: { long: ['--use-askpass', '--execute'], short: 'e' },
  ssh: { long: [], short: 'I', settings: SSH_SETTINGS },
  scp: { long: [], short: 'S', settings: SSH_SETTINGS },
  sftp: { long: [], short: 'SD', settings: SSH_SETTINGS },
};

const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk', 'original-awk']);

function namesRunner(text: string, runner: OptionRunner): boolean {
  return !runner.exact?.includes(optionName(text)) && abbreviates(text, runner.long, 4);
}

function optionRisk(words: readonly ShellWord[], name: string, runner: OptionRunner): string | undefined {
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    // A word known only at run time may be one of those options (`sort $opts`, a file named `--compress-program=sh`).
    if (!word.literal) return `an argument of ${name} is not a fixed word (it may be an option that runs a command)`;
    const text = word.text;
    if (text === '--') return undefined;
    if (runner.words?.some((start) => text.startsWith(start))) return `${name} ${text} runs a command`;
    if (text.startsWith('--')) {
      if (namesRunner(text, runner)) return `${name} ${optionName(text)} runs a command or a program it names`;
      continue;
    }
    const cluster = text.startsWith('-') ? text.slice(1) : runner.bundled && i === 1 ? text : '';
    // `-o KEY=VALUE` anywhere in a cluster (`-vo ProxyCommand=…`): the rest of the word, or the next one.
    const o = runner.settings && text.startsWith('-') ? cluster.indexOf('o') : -1;
    const letter = [...cluster].find((c, at) => runner.short?.includes(c) && (o < 0 || at < o));
    if (letter !== undefined) return `${name} -${letter} runs a command or a program it names`;
    if (o >= 0) {
      const attached = cluster.slice(o + 1);
      const setting = attached !== '' ? { text: attached, literal: true } : words[i + 1];
      if (setting && (!setting.literal || runner.settings!.test(setting.text))) return `${name} -o ${setting.text} runs a command or loads code`;
      if (attached === '') i++;
    }
  }
  return undefined;
}

function sedRisk(words: readonly ShellWord[]): string | undefined {
  const scripts: string[] = [];
  let first: string | undefined;
  let sandbox = false;
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (!word.literal) return 'an argument of sed is not a fixed word (it may be an option with a script)';
    const text = word.text;
    if (text === '--') {
      const next = words[i + 1];
      if (first === undefined && next) {
        if (!next.literal) return 'the script of sed is not a fixed word';
        first = next.text;
      }
      break;
    }
    if (!text.startsWith('-') || text === '-') {
      first ??= text;
      continue;
    }
    if (text.startsWith('--')) {
      const value = attachedValue(text);
      if (abbreviates(text, ['--file'], 3)) return 'sed --file runs a script from a file';
      if (abbreviates(text, ['--expression'], 3)) {
        const script = value !== undefined ? { text: value, literal: true } : words[++i];
        if (script && !script.literal) return 'the script of sed is not a fixed word';
        if (script) scripts.push(script.text);
      } else if (abbreviates(text, ['--sandbox'], 4)) sandbox = true;
      else if (value === undefined && abbreviates(text, ['--line-length'], 3)) i++;
      continue;
    }
    for (let c = 1; c < text.length; c++) {
      const letter = text[c]!;
      if (letter === 'f') return 'sed -f runs a script from a file';
      if (letter === 'e' || letter === 'l') {
        const argument = c < text.length - 1 ? { text: text.slice(c + 1), literal: true } : words[++i];
        if (letter === 'e' && argument && !argument.literal) return 'the script of sed is not a fixed word';
        if (letter === 'e' && argument) scripts.push(argument.text);
        break;
      }
      // -i takes the rest of the word as its suffix (`-ie` is the suffix "e", not -e).
      if (letter === 'i') break;
      if (!'nrEsuz'.includes(letter)) return `sed option -${letter} is not one the engine knows`;
    }
  }
  if (scripts.length === 0 && first !== undefined) scripts.push(first);
  if (sandbox) return undefined;
  return sedScriptRisk(scripts.join('\n'));
}

/**
 * Why a command of an ordinary program may run a command the rules do not
 * see (`sort --compress-program=sh`, `git -c alias.x='!cmd' x`, `sed
 * '1e cmd'`, `awk 'BEGIN { system("cmd") }'`), or undefined. A rule that
 * allows `sort`, `git log`, `sed` or `awk` allows that program's own work,
 * so such a command cannot be judged.
 */
export function programOptionRisk(words: readonly ShellWord[], name: string): string | undefined {
  if (name === 'git') return gitRisk(words);
  if (name === 'sed') return sedRisk(words);
  if (AWKS.has(name)) return awkRisk(words, name);
  const runner = OPTION_RUNNERS[name];
  return runner ? optionRisk(words, name, runner) : undefined;
}
