import test from 'ava';
import { helpTree, type CommandHelp } from '../helpers/cli-help.js';
import { codeSpans, documents, lines, type Document } from '../helpers/documents.js';
import { invocations, type Word } from './invocations.js';

/**
 * What the documents say about the CLI must be what the built CLI says
 * about itself (`node dist/src/cli/bin.js <command> --help`; no Docker):
 * every `toolcell <command> --flag` a document shows names a real command
 * (deploy/'s design notes may propose new ones) and a flag of its --help; docs/cli.md's table for each command lists
 * exactly the flags of its --help; the README's command table names every
 * command. Each check fails with the whole list, one line per problem.
 */

const tree = helpTree();
const ALWAYS = new Set(['-h', '--help']);
const PROGRAM = new Set(['-V', '--version']);

interface Resolved {
  help: CommandHelp;
  /** Words after the command's path. */
  rest: Word[];
}

/** The command a line of words names: subcommand by subcommand, as commander would resolve it. */
function resolve(commands: Map<string, CommandHelp>, words: Word[]): Resolved {
  let help = commands.get('')!;
  let index = 0;
  while (index < words.length) {
    const word = words[index]!;
    const next = word.quoted ? undefined : commands.get([...help.path, word.text].join(' '));
    if (next === undefined || !help.subcommands.includes(word.text)) break;
    help = next;
    index++;
  }
  return { help, rest: words.slice(index) };
}

const name = (help: CommandHelp): string => ['toolcell', ...help.path].join(' ');

/** deploy/'s design notes may name commands they propose (`toolcell swarm deploy`); the flags they show are still checked. */
const isDesignNote = (doc: Document): boolean => doc.path.startsWith('deploy/');

test('every toolcell command and flag a document shows is in that command’s --help', async (t) => {
  t.timeout(600_000, 'every --help is read once, a few at a time');
  const commands = await tree;
  const problems: string[] = [];
  let flagsChecked = 0;
  for (const doc of documents()) {
    for (const invocation of invocations(doc)) {
      const { help, rest } = resolve(commands, invocation.words);
      const first = rest[0];
      if (help.subcommands.length > 0 && first !== undefined && !first.quoted && /^[a-z][a-z-]*$/.test(first.text) && !isDesignNote(doc)) {
        problems.push(`${invocation.where}: \`${invocation.shown}\`: ${name(help)} has no command ${first.text} (it has ${help.subcommands.join(', ')})`);
        continue;
      }
      for (const word of rest) {
        if (word.quoted) continue;
        const flag = /^[[(]*(--?[A-Za-z][\w-]*)/.exec(word.text)?.[1];
        if (flag === undefined) continue;
        flagsChecked++;
        const known = help.flags.has(flag) || ALWAYS.has(flag) || (help.path.length === 0 && PROGRAM.has(flag));
        if (!known) problems.push(`${invocation.where}: \`${invocation.shown}\`: ${name(help)} --help has no ${flag}`);
      }
    }
  }
  t.true(flagsChecked > 50, `flags were found in the documents (${flagsChecked})`);
  t.deepEqual(problems, [], `commands or flags the CLI does not have:\n${problems.join('\n')}`);
});

test('docs/cli.md lists, for each command, exactly the flags of its --help', async (t) => {
  t.timeout(600_000, 'every --help is read once, a few at a time');
  const commands = await tree;
  const cli = documents().find((doc) => doc.path === 'docs/cli.md')!;
  const sections = commandSections(cli);
  const problems: string[] = [];
  for (const [path, section] of sections) {
    const help = commands.get(path);
    if (help === undefined) {
      problems.push(`docs/cli.md:${section.line}: a section for \`toolcell ${path}\`, which is not a command`);
      continue;
    }
    const expected = [...help.flags].filter((flag) => flag.startsWith('--') && !ALWAYS.has(flag));
    for (const flag of expected) {
      if (!section.flags.has(flag)) problems.push(`docs/cli.md:${section.line}: \`toolcell ${path}\` lacks ${flag}, which its --help lists`);
    }
    for (const flag of section.flags) {
      if (!help.flags.has(flag)) problems.push(`docs/cli.md:${section.line}: \`toolcell ${path}\` lists ${flag}, which its --help does not`);
    }
  }
  for (const [path, help] of commands) {
    const hasFlags = [...help.flags].some((flag) => !ALWAYS.has(flag) && !PROGRAM.has(flag));
    if (hasFlags && !sections.has(path)) problems.push(`docs/cli.md: no section \`toolcell ${path}\` with a table of its flags`);
  }
  t.deepEqual(problems, [], `docs/cli.md and --help disagree:\n${problems.join('\n')}`);
});

test('the README’s command table names every command', async (t) => {
  t.timeout(600_000, 'every --help is read once, a few at a time');
  const commands = await tree;
  const readme = documents().find((doc) => doc.path === 'README.md')!;
  const listed = new Set<string>();
  for (const line of lines(readme.text)) {
    const firstCell = firstCellOf(line.text);
    if (firstCell === undefined || line.inCodeBlock) continue;
    for (const span of codeSpans(firstCell)) {
      for (const invocation of invocations({ path: readme.path, text: `\`${span}\`` })) {
        listed.add(resolve(commands, invocation.words).help.path.join(' '));
      }
    }
  }
  const leaves = [...commands.values()].filter((help) => help.path.length > 0 && help.subcommands.length === 0);
  const missing = leaves.map((help) => name(help)).filter((command) => !listed.has(command.slice('toolcell '.length)));
  t.true(leaves.length > 20, `the CLI's commands were read (${leaves.length})`);
  t.deepEqual(missing, [], `commands missing from the README's command table:\n${missing.join('\n')}`);
});

interface Section {
  line: number;
  flags: Set<string>;
}

/** docs/cli.md's sections headed `` `toolcell <command>` ``, each with the long flags in the first column of its tables. */
function commandSections(doc: Document): Map<string, Section> {
  const sections = new Map<string, Section>();
  let current: Section | undefined;
  for (const line of lines(doc.text)) {
    if (line.inCodeBlock) continue;
    if (/^#{1,6}\s/.test(line.text)) {
      const heading = /^#{1,6}\s+`toolcell ([a-z][a-z -]*)`\s*$/.exec(line.text);
      current = heading ? { line: line.number, flags: new Set() } : undefined;
      if (heading && current) sections.set(heading[1]!.trim(), current);
      continue;
    }
    const firstCell = firstCellOf(line.text);
    if (current === undefined || firstCell === undefined) continue;
    for (const span of codeSpans(firstCell)) for (const flag of span.matchAll(/(?<![\w-])(--[A-Za-z][\w-]*)/g)) current.flags.add(flag[1]!);
  }
  return sections;
}

/** The first cell of a Markdown table row (a `\|` inside it is an escaped pipe, not a cell's end). */
function firstCellOf(row: string): string | undefined {
  if (!row.startsWith('|')) return undefined;
  return row.split(/(?<!\\)\|/)[1];
}
