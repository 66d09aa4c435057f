/**
 * programOptionRisk on its own: which words of an ordinary program make it
 * run a command, read as the program reads its options and scripts, and
 * which ordinary uses stay judged as the program itself.
 */
import test from 'ava';
import { programOptionRisk } from '../../src/policy/program-options.js';
import type { ShellWord } from '../../src/policy/shell-words.js';

const words = (...texts: string[]): ShellWord[] => texts.map((text) => ({ text, literal: !text.startsWith('$') }));
const risk = (...texts: string[]) => programOptionRisk(words(...texts), texts[0]!);

const RUNS: string[][] = [
  ['wget', '--use-askpass=rm x', 'https://example.com/'],
  ['wget', '--use-ask', 'rm x', 'https://example.com/'],
  ['wget', '-e', 'use_askpass=rm x', 'https://example.com/'],
  ['wget', '-qe', 'use_askpass=rm x', 'https://example.com/'],
  ['sort', '--compress-program=sh', 'data'],
  ['sort', '$opts', 'data'],
  ['tar', '--to-command=sh', '-xf', 'a.tar'],
  ['tar', 'xIf', 'sh', 'a.tar'],
  ['rsync', '-ave', 'sh', 'a', 'b'],
  ['man', '-Psh', 'ls'],
  ['make', '-E', '$(shell rm x)'],
  ['zip', '-TT', 'sh', 'a.zip', 'f'],
  ['zip', '-TTsh', 'a.zip', 'f'],
  ['ssh', '-o', 'ProxyCommand=sh', 'host'],
  ['ssh', '-oLocalCommand=sh', 'host'],
  ['ssh', '-vo', 'proxycommand sh', 'host'],
  ['ssh', '-4vo', 'Match exec "sh"', 'host'],
  ['ssh', '-Io', 'host'],
  ['scp', '-S', 'sh', 'a', 'host:b'],
  ['git', '-c', 'core.pager=sh', 'log'],
  ['git', 'rebase', '-ix', 'sh', 'HEAD~2'],
  ['sed', '-n', '1e sh', 'f'],
  ['sed', '--expression', 's/^//e', 'f'],
  ['awk', 'BEGIN { system("sh") }'],
  ['awk', '-v', 'x=1', '--', '{ print | "sh" }'],
  ['gawk', '--load=ext', 'BEGIN { }'],
  ['nawk', '--sandbox', 'BEGIN { system("sh") }'],
  ['awk', '--sandbox', 'BEGIN { system("sh") }'],
];

const ORDINARY: string[][] = [
  ['wget', '-qO-', 'https://example.com/'],
  ['wget', '--output-document=page.html', 'https://example.com/'],
  ['sort', '-k2', '-t,', 'data'],
  ['sort', '--check', 'data'],
  ['sort', '--', '$file'],
  ['tar', '-czf', 'out.tgz', 'dir'],
  ['tar', '-cf', 'out.tar', '--checkpoint=10', 'dir'],
  ['rsync', '-av', 'a', 'b'],
  ['ssh', '-o', 'ConnectTimeout=5', 'host'],
  ['ssh', '-vo', 'ConnectTimeout=5', 'host'],
  ['git', 'log', '--oneline', '-5'],
  ['git', '-C', 'sub', 'status'],
  ['sed', '-n', '/e/p', 'f'],
  ['sed', '-ie', 's/x/y/', 'f'],
  ['sed', 's/x/y/w out.txt', 'f'],
  ['sed', '--sandbox', '1e sh', 'f'],
  ['awk', '-F,', '{ print $2 }', 'f'],
  ['gawk', '--sandbox', 'BEGIN { system("sh") }'],
  ['cat', '--compress-program=sh'],
];

for (const command of RUNS) {
  test(`${command.join(' ')}: runs a command`, (t) => {
    t.truthy(risk(...command));
  });
}

for (const command of ORDINARY) {
  test(`${command.join(' ')}: runs none`, (t) => {
    t.is(risk(...command), undefined);
  });
}

test('a sed script the reader cannot follow is never taken as harmless', (t) => {
  t.regex(risk('sed', 's/unterminated', 'f') ?? '', /cannot be read with confidence/);
  t.regex(risk('sed', '1K', 'f') ?? '', /cannot be read with confidence/);
});
