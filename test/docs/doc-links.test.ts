import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import test from 'ava';
import { packageRoot } from '../../src/paths.js';
import { documents, headingAnchors, lines, links } from '../helpers/documents.js';

/**
 * The documents must not send a reader nowhere: every relative link
 * resolves (a file or folder of the repository; an `#anchor` to a heading
 * of its Markdown file, as GitHub slugs it), and every file of the
 * repository a document names (a test that backs a claim, a source file, a
 * bench script) exists. Each check fails with the whole list, one line per
 * problem, `document:line: what`.
 */

/** Folders whose files documents name by path (`test/security/kill.test.ts`, `src/errors.ts`). */
const REPOSITORY_PATH = /(?<![\w./~-])((?:test|src|bench|sandbox|workers|\.ci)\/[\w./-]*)/g;
/** A test named by its file name alone (`hosting-isolation.test.ts`, `test_protocol.py`). */
const BARE_TEST_NAME = /(?<![\w./-])([\w-]+\.test\.ts|test_\w+\.py)\b/g;

test('every relative link of a document resolves, #anchors included', (t) => {
  const problems: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    let found = anchorsOf.get(file);
    if (found === undefined) {
      found = headingAnchors(readFileSync(join(packageRoot, file), 'utf8'));
      anchorsOf.set(file, found);
    }
    return found;
  };
  let checked = 0;
  for (const doc of documents()) {
    for (const line of lines(doc.text)) {
      if (line.inCodeBlock) continue;
      for (const target of links(line.text)) {
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
        checked++;
        const where = `${doc.path}:${line.number}`;
        const [pathPart = '', anchor] = target.split('#', 2) as [string, string | undefined];
        const file =
          pathPart === ''
            ? doc.path
            : normalize(join(dirname(doc.path), decodeURIComponent(pathPart)))
                .split('\\')
                .join('/');
        if (file.startsWith('..')) {
          problems.push(`${where}: ${target} leads out of the repository`);
          continue;
        }
        if (!existsSync(join(packageRoot, file))) {
          problems.push(`${where}: ${target}: no file ${file}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!file.endsWith('.md') || statSync(join(packageRoot, file)).isDirectory()) {
          problems.push(`${where}: ${target}: an anchor into ${file}, which is not a Markdown file`);
        } else if (!anchors(file).has(anchor)) {
          problems.push(`${where}: ${target}: ${file} has no heading whose anchor is #${anchor}`);
        }
      }
    }
  }
  t.true(checked > 100, `links were found (${checked})`);
  t.deepEqual(problems, [], `broken links:\n${problems.join('\n')}`);
});

test('every file of the repository a document names exists: tests, sources, bench scripts', (t) => {
  const testNames = new Set(filesUnder('test').map((path) => path.slice(path.lastIndexOf('/') + 1)));
  const problems: string[] = [];
  let checked = 0;
  for (const doc of documents()) {
    for (const line of lines(doc.text)) {
      const where = `${doc.path}:${line.number}`;
      for (const match of line.text.matchAll(REPOSITORY_PATH)) {
        const path = match[1]!.replace(/[.:]+$/, '');
        const after = line.text.slice(match.index + match[0].length);
        if (/^[*<{…]/.test(after)) continue; // a glob or a placeholder, not a file
        checked++;
        if (!existsSync(join(packageRoot, path))) problems.push(`${where}: names ${path}, which does not exist`);
      }
      for (const match of line.text.matchAll(BARE_TEST_NAME)) {
        checked++;
        if (!testNames.has(match[1]!)) problems.push(`${where}: names the test ${match[1]}, which no folder under test/ holds`);
      }
    }
  }
  t.true(checked > 200, `named files were found (${checked})`);
  t.deepEqual(problems, [], `files named but missing:\n${problems.join('\n')}`);
});

function filesUnder(folder: string): string[] {
  return readdirSync(join(packageRoot, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(packageRoot, join(entry.parentPath, entry.name)).split('\\').join('/'));
}
