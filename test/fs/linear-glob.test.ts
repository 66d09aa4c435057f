import test from 'ava';
import picomatch from 'picomatch';
import { linearGlob, MAX_GLOB_CHARS } from '../../src/fs/linear-glob.js';

const PATHS = [
  'a.ts',
  'src/a.ts',
  'src/x/y/b.tsx',
  '.git/config',
  '.env',
  'docs',
  'docs/readme.md',
  'node_modules/x/index.js',
  'A.TS',
  'src/.hidden/f.js',
  'dir/sub',
  'x.15',
  'foo',
  'ab',
  'a.b.c',
];
const GLOBS = ['*.ts', '**/*.ts', '**/*.{ts,tsx}', 'src/**', 'docs/**', '**/.hidden/**', '*', '**', '?.ts', '[a-z].ts', 'src/*/*/*.tsx', '!*.ts'];
const MORE = ['@(foo|ab)', '+(a|b)', 'a.*', '**/index.js', 'src/**/b.tsx', '*/sub', '**/sub', '[!a]*', '*.[jt]s', '*.{1..20}'];

test('matches as picomatch does (dotfiles included), with and without nocase', (t) => {
  for (const glob of [...GLOBS, ...MORE])
    for (const nocase of [false, true]) {
      const linear = linearGlob(glob, { nocase });
      const reference = picomatch(glob, { dot: true, nocase });
      for (const path of PATHS) t.is(linear(path), reference(path), `${glob} ${nocase ? 'nocase ' : ''}${path}`);
    }
});

test('basename: a pattern without a slash matches the last segment, one with a slash the whole path', (t) => {
  const byName = linearGlob('*.tsx', { basename: true });
  t.true(byName('src/x/y/b.tsx'));
  t.false(byName('src/a.ts'));
  const byPath = linearGlob('src/**', { basename: true });
  t.true(byPath('src/a.ts'));
  t.false(byPath('docs/readme.md'));
});

test('globs that backtrack in JavaScript answer at once', (t) => {
  // picomatch's own regex took 10 s for the first against 60 a's; names can have 255.
  const name = 'a'.repeat(255);
  for (const glob of ['*a*a*a*a*a*a*a*a*a*a*b', '*a*a*a*a*a*a*a*a*a*a*a*', '?*?*?*?*?*?*?*?*?*?*b', '*(a|aa)*(a|aa)*(a|aa)b', '{a,aa}*{a,aa}*{a,aa}*b'])
    t.is(linearGlob(glob)(name), glob.endsWith('*'), glob);
  t.false(linearGlob('**/a/**/a/**/a/**/a/**/b')(Array(2000).fill('a').join('/')));
});

test('a glob RE2 cannot run is refused as unsupported_pattern; an over-long one as invalid_tool_params', (t) => {
  t.throws(() => linearGlob('!(x)*'), { code: 'unsupported_pattern', message: /linear time/ });
  t.throws(() => linearGlob('*'.repeat(MAX_GLOB_CHARS + 1)), { code: 'invalid_tool_params' });
});
