import { abbreviates as abbreviatesOption, attachedValue } from './long-options.js';
import type { ShellWord } from './shell-words.js';

/** Options of awk (gawk, mawk) that load code from elsewhere: a program file, an include, an extension. */
const LOADS_CODE = ['--file', '--exec', '--include', '--load'];
const SHORT_LOADS_CODE = 'fEilW';

/** Whether `long` (`--fi`, `--file=x`) is an abbreviation getopt may take for one of `names`. */
const abbreviates = (long: string, names: readonly string[]): boolean => abbreviatesOption(long, names, 3);

/**
 * Why an awk command may run other commands: its program calls `system()`,
 * or pipes to or from a command (`print | "cmd"`, `"cmd" | getline`, gawk's
 * `|&`), or loads code (`-f`, `@include`, `@load`). A `|` anywhere in the
 * program counts (a regular expression's alternation too): reading awk's
 * grammar to tell them apart is not worth a wrong guess. gawk's `--sandbox`
 * turns all of them off (named as gawk: `awk` may be another awk). Undefined when the program runs nothing.
 */
export function awkRisk(words: readonly ShellWord[], name: string): string | undefined {
  const programs: string[] = [];
  let sandbox = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (!word.literal) return `an option or the program of ${words[0]!.text} is not a fixed word`;
    const text = word.text;
    if (text === '--') {
      i++;
      break;
    }
    if (!text.startsWith('-') || text === '-') break;
    if (text.startsWith('--')) {
      if (abbreviates(text, LOADS_CODE)) return `${text} makes ${words[0]!.text} run code from a file`;
      // Only gawk has --sandbox; the one true awk warns about an option it does not know and runs on.
      if (abbreviates(text, ['--sandbox'])) sandbox = name === 'gawk';
      else if (abbreviates(text, ['--source'])) {
        const attached = attachedValue(text);
        const source = attached !== undefined ? { text: attached, literal: true } : words[++i];
        if (source === undefined) break;
        if (!source.literal) return `the program of ${words[0]!.text} is not a fixed word`;
        programs.push(source.text);
      } else if (!text.includes('=') && abbreviates(text, ['--assign', '--field-separator'])) i++;
      continue;
    }
    // A cluster of short options: the first that takes an argument takes the rest of the word, or the next word.
    for (let c = 1; c < text.length; c++) {
      const letter = text[c]!;
      if (SHORT_LOADS_CODE.includes(letter)) return `-${letter} makes ${words[0]!.text} run code from a file or an extension`;
      if (letter === 'e' || letter === 'v' || letter === 'F') {
        const argument = c < text.length - 1 ? { text: text.slice(c + 1), literal: true } : words[++i];
        if (letter === 'e' && argument && !argument.literal) return `the program of ${words[0]!.text} is not a fixed word`;
        if (letter === 'e' && argument) programs.push(argument.text);
        break;
      }
    }
  }
  // Without -e (--source) the first word after the options is the program.
  if (programs.length === 0 && i < words.length) {
    if (!words[i]!.literal) return `the program of ${words[0]!.text} is not a fixed word`;
    programs.push(words[i]!.text);
  }
  if (sandbox) return undefined;
  for (const program of programs) {
    // `system` anywhere: gawk can call it by name (`f = "system"; @f("cmd")`).
    if (/\bsystem\b/u.test(program)) return `${words[0]!.text}'s program calls system(), which runs a command`;
    if (program.includes('|')) return `${words[0]!.text}'s program has a pipe, which runs a command (print | "cmd", "cmd" | getline)`;
    if (/@\s*[A-Za-z_]/u.test(program)) return `${words[0]!.text}'s program loads code from a file (@include, @load) or calls a function by name (@f())`;
  }
  return undefined;
}
