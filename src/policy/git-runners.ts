import { abbreviates, optionName } from './long-options.js';
import type { ShellWord } from './shell-words.js';

/** git's own options that take the next word (`git -C dir log`). */
const GLOBAL_WITH_VALUE = new Set(['-C', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--list-cmds', '--attr-source']);

/**
 * Subcommands whose options name a command to run. Long options count in
 * any abbreviation git's option parser accepts (`--exe` for `--exec`);
 * short options anywhere in a cluster (`-ix CMD`).
 */
const SUBCOMMAND_RUNNERS: Readonly<Record<string, { long: readonly string[]; short?: string; words?: readonly string[]; always?: true }>> = {
  rebase: { long: ['--exec'], short: 'x' },
  grep: { long: ['--open-files-in-pager'], short: 'O' },
  difftool: { long: ['--extcmd'], short: 'x' },
  fetch: { long: ['--upload-pack'] },
  pull: { long: ['--upload-pack'] },
  clone: { long: ['--upload-pack', '--config', '--template'], short: 'uc' },
  'ls-remote': { long: ['--upload-pack'], short: 'u' },
  archive: { long: ['--exec', '--remote'] },
  push: { long: ['--receive-pack', '--exec'] },
  'send-pack': { long: ['--receive-pack', '--exec'] },
  submodule: { long: [], words: ['foreach'] },
  bisect: { long: [], words: ['run'] },
  'filter-branch': { long: [], always: true },
  'send-email': { long: [], always: true },
  instaweb: { long: [], always: true },
};

/**
 * Why a git command may run a command of the caller's choosing: `-c` and
 * `--config-env` set configuration, and many settings run programs
 * (`alias.x='!cmd'`, `core.pager`, `core.fsmonitor`, `diff.external`…);
 * `--exec-path` picks where git's own commands come from; and some
 * subcommands run a command named by an option or an argument (`rebase
 * --exec`, `grep -O`, `submodule foreach`, `bisect run`, `fetch
 * --upload-pack`). A rule that allows `git log` allows git, not those.
 * Undefined for any other git command.
 */
export function gitRisk(words: readonly ShellWord[]): string | undefined {
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (!word.literal) return 'an option or the subcommand of git is not a fixed word';
    const text = word.text;
    if (text.startsWith('-c') || optionName(text) === '--config-env')
      return `git ${text} sets configuration, and many of git's settings run programs (alias.*, core.pager, core.fsmonitor, diff.external…)`;
    if (text.startsWith('--exec-path=')) return 'git --exec-path= makes git run its commands from another folder';
    if (GLOBAL_WITH_VALUE.has(text)) {
      i++;
      continue;
    }
    if (!text.startsWith('-')) break;
  }
  const subcommand = words[i]?.text;
  const spec = subcommand === undefined ? undefined : SUBCOMMAND_RUNNERS[subcommand];
  if (!spec) return undefined;
  if (spec.always) return `git ${subcommand} runs commands given in its options or configuration`;
  for (const word of words.slice(i + 1)) {
    if (!word.literal) return `an argument of git ${subcommand} is not a fixed word (it may be an option that runs a command)`;
    const text = word.text;
    if (text === '--') break;
    if (spec.words?.includes(text)) return `git ${subcommand} ${text} runs a command`;
    if (text.startsWith('--') ? abbreviates(text, spec.long, 4) : text.startsWith('-') && [...text.slice(1)].some((c) => spec.short?.includes(c)))
      return `git ${subcommand} ${optionName(text)} runs a command given to it (or one its new configuration names)`;
  }
  return undefined;
}
