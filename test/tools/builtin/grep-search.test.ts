import test from 'ava';
import { writeFileSync } from 'node:fs';
import {
  GREP_MAX_MATCHES,
  createGrepSearchTool,
  grepSearchTool,
  searchFileContentTool,
  type GrepEngineChoice,
} from '../../../src/tools/builtin/grep-search.js';
import { MAX_PATTERN_CHARS } from '../../../src/tools/builtin/grep/line-regex.js';
import { llmText, localTool, runTool, useTempWorkspace } from '../../helpers/workspace.js';

const FILES = {
  'src/a.ts': 'const greeting = "Hello";\nexport function hello() {}\n',
  'src/b.js': 'nothing here\n',
  'docs/readme.md': 'say HELLO\n',
  '.hidden/h.txt': 'hello from a dotdir\n',
  '.gitignore': 'ignored/\n',
  'ignored/x.ts': 'hello ignored\n',
  'bin.dat': Buffer.from([0x68, 0x65, 0x6c, 0x6c, 0x6f, 0, 1, 2]),
};

const EXPECTED = [
  'Found 4 matches for pattern "hello" in path ".":',
  '---',
  'File: .hidden/h.txt',
  'L1: hello from a dotdir',
  '---',
  'File: docs/readme.md',
  'L1: say HELLO',
  '---',
  'File: src/a.ts',
  'L1: const greeting = "Hello";',
  'L2: export function hello() {}',
  '---',
].join('\n');

// 'auto' and 'javascript' name the one engine; both spellings stay accepted.
const engines: Array<{ engine: GrepEngineChoice; display: string }> = [
  { engine: 'auto', display: 'javascript' },
  { engine: 'javascript', display: 'javascript' },
];

for (const { engine, display } of engines) {
  test(`${engine}: groups matches by file, case-insensitively, skipping ignored and binary files`, async (t) => {
    const ws = useTempWorkspace(t, { files: FILES });
    const result = await runTool(localTool(createGrepSearchTool({ name: 'grep_search', engine }), ws), { pattern: 'hello' });
    t.is(llmText(result), EXPECTED);
    t.is(result.returnDisplay, `Found 4 matches (${display})`);
  });

  test(`${engine}: a file whose name is not UTF-8 is searched, shown lossily and marked as such`, async (t) => {
    const ws = useTempWorkspace(t);
    writeFileSync(Buffer.concat([Buffer.from(`${ws.root}/caf`), Buffer.from([0xe9])]), 'needle\n');
    writeFileSync(`${ws.root}/plain.txt`, 'needle\n');
    const text = llmText(await runTool(localTool(createGrepSearchTool({ name: 'g', engine }), ws), { pattern: 'needle' }));
    t.regex(text, /File: caf\ufffd \(name is not valid UTF-8\)\nL1: needle/);
    t.regex(text, /File: plain\.txt\nL1: needle/);
  });

  test(`${engine}: include_pattern and dir_path narrow the search`, async (t) => {
    const ws = useTempWorkspace(t, { files: FILES });
    const tool = localTool(createGrepSearchTool({ name: 'grep_search', engine }), ws);
    const included = llmText(await runTool(tool, { pattern: 'hello', include_pattern: '*.ts' }));
    t.regex(included, /^Found 2 matches for pattern "hello" in path "." \(filter: "\*\.ts"\):/);
    t.false(included.includes('readme'));
    const scoped = llmText(await runTool(tool, { pattern: 'hello', dir_path: 'docs' }));
    t.is(scoped, 'Found 1 match for pattern "hello" in path "docs":\n---\nFile: readme.md\nL1: say HELLO\n---');
  });

  test(`${engine}: no match is a plain answer`, async (t) => {
    const ws = useTempWorkspace(t, { files: FILES });
    const result = await runTool(localTool(createGrepSearchTool({ name: 'grep_search', engine }), ws), { pattern: 'zebra' });
    t.is(result.error, undefined);
    t.is(llmText(result), 'No matches found for pattern "zebra" in path ".".');
  });

  test(`${engine}: does not follow symlinks out of the workspace`, async (t) => {
    const ws = useTempWorkspace(t, { files: { 'a.txt': 'nothing' }, outsideFiles: { 'secret.txt': 'hello secret' } });
    ws.symlink('out', ws.outside);
    ws.symlink('secret-link.txt', `${ws.outside}/secret.txt`);
    const text = llmText(await runTool(localTool(createGrepSearchTool({ name: 'grep_search', engine }), ws), { pattern: 'secret' }));
    t.false(text.includes('hello secret'), text);
  });
}

test('javascript: caps the number of matches with a note', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'many.txt': 'match\n'.repeat(GREP_MAX_MATCHES + 10) } });
  const text = llmText(await runTool(localTool(createGrepSearchTool({ name: 'g', engine: 'javascript' }), ws), { pattern: '^match' }));
  t.regex(text, new RegExp(`results limited to ${GREP_MAX_MATCHES} matches`));
  t.is(text.split('\n').filter((line) => line.startsWith('L')).length, GREP_MAX_MATCHES);
});

test('javascript: long matching lines are cut', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'wide.txt': `match ${'x'.repeat(2000)}\n` } });
  const text = llmText(await runTool(localTool(createGrepSearchTool({ name: 'g', engine: 'javascript' }), ws), { pattern: 'match' }));
  t.regex(text, /\.\.\. \[truncated\]/);
  t.false(text.includes('x'.repeat(501)));
});

test('what RE2 cannot match in linear time is refused as unsupported_pattern, naming the construct', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'foobar\nfoobaz\naa\n' } });
  const grep = localTool(createGrepSearchTool({ name: 'g', engine: 'javascript' }), ws);
  for (const pattern of ['foo(?=baz)', 'foo(?!bar)', '(?<=foo)baz', '(?<!x)foo', '(a)\\1', '(?<n>a)\\k<n>', 'a{1001}', 'a[^]b']) {
    const result = await runTool(grep, { pattern });
    t.is(result.error?.type, 'unsupported_pattern', pattern);
    t.regex(llmText(result), /linear time \(RE2\).*backreferences.*lookahead and lookbehind/, pattern);
  }
  const long = await runTool(grep, { pattern: 'a'.repeat(MAX_PATTERN_CHARS + 1) });
  t.is(long.error?.type, 'invalid_tool_params');
  t.regex(llmText(long), new RegExp(`at most ${MAX_PATTERN_CHARS}`));
});

test('catastrophic patterns are matched in linear time, with the right lines', async (t) => {
  // Each held a worker for minutes under JavaScript's backtracking engine (44 a's: 87 s for the first).
  const evil = `${'a'.repeat(44)}!`;
  const ws = useTempWorkspace(t, { files: { 'evil.txt': `${evil}\n${'a'.repeat(44)}\n${'x'.repeat(5000)}\n${'ab'.repeat(3000)}\n` } });
  const grep = localTool(createGrepSearchTool({ name: 'g', engine: 'javascript' }), ws);
  const cases: Array<[string, number[]]> = [
    ['^(a|aa)+$', [2]],
    ['^(a+)+$', [2]],
    ['(a*)*b', [4]],
    ['(x+x+)+y', []],
    ['^(\\w+\\s?)*$', [2, 3, 4]],
    ['(.*a){20}!', [1]],
    ['((ab)*)*c', []],
    ['(a|a?)+$', [1, 2, 3, 4]],
  ];
  for (const [pattern, lines] of cases) {
    const result = await runTool(grep, { pattern });
    t.is(result.error, undefined, pattern);
    t.deepEqual(
      [...llmText(result).matchAll(/^L(\d+):/gm)].map((match) => Number(match[1])),
      lines,
      pattern,
    );
  }
});

test('lines are matched one by one, as grep does: anchors per line, CRLF, a match never spans lines', async (t) => {
  const ws = useTempWorkspace(t, {
    files: { 'crlf.txt': 'one\r\ntwo end\r\nthree\r\n', 'span.txt': 'alpha\nbeta\ngamma alpha beta\n', 'bom.txt': '\ufeffFirst line\nsecond\n' },
  });
  const grep = localTool(createGrepSearchTool({ name: 'g', engine: 'javascript' }), ws);
  const linesOf = async (pattern: string) =>
    [...llmText(await runTool(grep, { pattern })).matchAll(/^File: (\S+)\n((?:L.*\n?)+)/gm)].map(
      (m) => `${m[1]}:${[...m[2]!.matchAll(/^L(\d+)/gm)].map((l) => l[1]).join(',')}`,
    );
  t.deepEqual(await linesOf('end$'), ['crlf.txt:2']);
  t.deepEqual(await linesOf('^two'), ['crlf.txt:2']);
  // `\s` matches a newline: across lines there is a match, within one line only in line 3.
  t.deepEqual(await linesOf('alpha\\s+beta'), ['span.txt:3']);
  t.deepEqual(await linesOf('alpha[^x]*beta'), ['span.txt:3']);
  t.deepEqual(await linesOf('^first'), ['bom.txt:1']);
  // \A and \z anchor at the line's ends (the pattern is searched line by line only).
  t.deepEqual(await linesOf('\\Asecond\\z'), ['bom.txt:2']);
  // A file's last newline ends its last line: no empty line follows it.
  t.deepEqual(await linesOf('^$'), []);
});

test('an invalid regex is invalid_tool_params', async (t) => {
  const ws = useTempWorkspace(t);
  t.is((await runTool(localTool(grepSearchTool, ws), { pattern: '(unclosed' })).error?.type, 'invalid_tool_params');
});

test('dir_path outside the workspace or not a directory is refused', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'f.txt': '' } });
  const tool = localTool(grepSearchTool, ws);
  t.is((await runTool(tool, { pattern: 'x', dir_path: '..' })).error?.type, 'path_not_in_workspace');
  t.is((await runTool(tool, { pattern: 'x', dir_path: 'f.txt' })).error?.type, 'path_is_not_a_directory');
});

test('an abort stops the search and reports cancelled', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'x' } });
  for (const engine of ['javascript', 'auto'] as const) {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(localTool(createGrepSearchTool({ name: 'g', engine }), ws), { pattern: 'x' }, controller.signal);
    t.is(result.error?.type, 'cancelled', engine);
  }
});

test('search_file_content is the same tool under its old name', async (t) => {
  const ws = useTempWorkspace(t, { files: { 'a.txt': 'needle\n' } });
  t.is(searchFileContentTool.name, 'search_file_content');
  t.regex(llmText(await runTool(localTool(searchFileContentTool, ws), { pattern: 'needle' })), /File: a\.txt\nL1: needle/);
});

test('an unknown engine is a TypeError naming the option', (t) => {
  t.throws(() => createGrepSearchTool({ name: 'g', engine: 'sed' as GrepEngineChoice }), { instanceOf: TypeError, message: /options\.engine/ });
});
