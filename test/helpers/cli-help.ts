import { runCli } from './cli.js';
import { mapLimited } from './map-limited.js';

/**
 * What the built CLI says about itself: every command's `--help`, walked
 * from `toolcell --help` down through commander's `Commands:` sections, as
 * the flags and subcommands each command has.
 */

export interface CommandHelp {
  /** The command's path without `toolcell` (`[]` for the program, `['tenant', 'add']`). */
  path: string[];
  /** Every flag in its `Options:` section, long and short (`--json`, `-w`). */
  flags: Set<string>;
  /** Its subcommands, without commander's `help`. */
  subcommands: string[];
  /** The whole text `--help` printed. */
  text: string;
}

/** Every command's help, keyed by its path joined with spaces (`''` for the program). */
export async function helpTree(concurrency = 4): Promise<Map<string, CommandHelp>> {
  const tree = new Map<string, CommandHelp>();
  let level: string[][] = [[]];
  while (level.length > 0) {
    const helps = await mapLimited(level, concurrency, readHelp);
    for (const help of helps) tree.set(help.path.join(' '), help);
    level = helps.flatMap((help) => help.subcommands.map((name) => [...help.path, name]));
  }
  return tree;
}

async function readHelp(path: string[]): Promise<CommandHelp> {
  const result = await runCli([...path, '--help']);
  if (result.code !== 0) throw new Error(`toolcell ${path.join(' ')} --help exited ${result.code}: ${result.stderr}`);
  return { path, flags: optionFlags(result.stdout), subcommands: commandNames(result.stdout), text: result.stdout };
}

/** The flags of commander's `Options:` section: `  -w, --workspace <dir>  …` gives `-w` and `--workspace`. */
export function optionFlags(help: string): Set<string> {
  const flags = new Set<string>();
  for (const line of section(help, 'Options')) {
    const match = /^ {2}(?:(-[A-Za-z]), )?(--[A-Za-z][\w-]*)/.exec(line);
    if (!match) continue;
    if (match[1]) flags.add(match[1]);
    flags.add(match[2]!);
  }
  return flags;
}

/** Command names listed under `Commands:`, without `help`. */
function commandNames(help: string): string[] {
  const names: string[] = [];
  for (const line of section(help, 'Commands')) {
    const match = /^ {2}([a-z][a-z-]*)\b/.exec(line);
    if (match && match[1] !== 'help') names.push(match[1]!);
  }
  return names;
}

function section(help: string, title: string): string[] {
  const after = help.split(new RegExp(`^${title}:\\n`, 'm'))[1];
  if (after === undefined) return [];
  const lines: string[] = [];
  for (const line of after.split('\n')) {
    if (!line.startsWith(' ')) break;
    lines.push(line);
  }
  return lines;
}
