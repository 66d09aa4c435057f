/**
 * Long options as getopt reads them: `--name=value` or `--name value`, and
 * any prefix of a long option's name stands for it (`--compress-prog` is
 * `--compress-program`). The rules of programs that run commands by option
 * (program-options.ts, git-runners.ts, awk-program.ts) match both.
 */

/** The option's name without its attached value (`--to-command=sh` → `--to-command`). */
export function optionName(word: string): string {
  return word.split('=')[0]!;
}

/** The value attached with `=`, if any. */
export function attachedValue(word: string): string | undefined {
  const at = word.indexOf('=');
  return at < 0 ? undefined : word.slice(at + 1);
}

/**
 * Whether `word` may be taken for one of `names`: its name is a prefix of
 * one, at least `shortest` characters long with the dashes (shorter ones
 * are left to the callers' other checks).
 */
export function abbreviates(word: string, names: readonly string[], shortest: number): boolean {
  const name = optionName(word);
  return name.length >= shortest && names.some((long) => long.startsWith(name));
}
