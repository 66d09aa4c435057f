/**
 * bench/linear-matching: what matching tenants' patterns and pages in
 * bounded time costs, side by side in one run.
 *
 * - grep: a 10 MB source-like file searched line by line with JavaScript's
 *   RegExp (the old engine) and with LineRegex (RE2), for ordinary patterns,
 *   and the catastrophic `^(a|aa)+$` on lines of a's of growing length.
 * - HTML: nested divs turned into text by html-to-text alone (the old path,
 *   on small pages only: it grows with the square of the depth) and by
 *   convertHtml (flattened below 256 first), and a shallow 1 MB page.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/linear-matching.js
 */
import { convert } from 'html-to-text';
import { performance } from 'node:perf_hooks';
import { compileLineRegex } from '../src/tools/builtin/grep/line-regex.js';
import { convertHtml } from '../src/tools/web/convert-html.js';

function time(run: () => unknown): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

/** grep_search stops at this many matching lines; both sides do too. */
const MAX_MATCHES = 500;

function jsLines(pattern: string, text: string): number {
  const regex = new RegExp(pattern, 'i');
  let count = 0;
  for (const line of text.split('\n')) if (regex.test(line) && ++count >= MAX_MATCHES) break;
  return count;
}

function re2Lines(pattern: string, text: Buffer): number {
  const compiled = compileLineRegex(pattern);
  if (!compiled.ok) throw new Error(compiled.message);
  let count = 0;
  compiled.regex.searchLines(text, () => ++count < MAX_MATCHES);
  return count;
}

const line = (i: number) => `  const value${i} = compute(items[${i}], { retries: 3, label: 'item-${i}' }); // TODO check\n`;
const source = Array.from({ length: 130_000 }, (_, i) => line(i)).join('');
const sourceBytes = Buffer.from(source);
console.log(`grep over ${(sourceBytes.length / 1e6).toFixed(1)} MB (${130_000} lines), up to ${MAX_MATCHES} matches: JavaScript RegExp vs RE2 (LineRegex)`);
for (let i = 0; i < 3; i++) {
  jsLines('warm', source);
  re2Lines('warm', sourceBytes);
}
for (const pattern of ['compute\\(items\\[12345\\]', 'no such text', 'retries:\\s+\\d', 'TODO', 'value\\d+ = compute\\(items\\[9\\d{4}\\]']) {
  const js = time(() => jsLines(pattern, source));
  const re2 = time(() => re2Lines(pattern, sourceBytes));
  console.log(`  ${pattern.padEnd(26)} js ${js.toFixed(0).padStart(6)} ms   re2 ${re2.toFixed(0).padStart(6)} ms   re2/js ${(re2 / js).toFixed(2)}`);
}

console.log('catastrophic ^(a|aa)+$ against a line of n a\'s and a "!": JavaScript vs RE2');
for (const n of [20, 24, 28, 32]) {
  const text = `${'a'.repeat(n)}!\n`;
  const js = time(() => jsLines('^(a|aa)+$', text));
  const re2 = time(() => re2Lines('^(a|aa)+$', Buffer.from(text)));
  console.log(`  n=${n}  js ${js.toFixed(1).padStart(9)} ms   re2 ${re2.toFixed(2)} ms`);
}

console.log('HTML: html-to-text alone (old) vs convertHtml (flattened below 256 first)');
const options = { wordwrap: false as const };
for (const depth of [2_000, 5_000, 10_000]) {
  const page = `${'<div>'.repeat(depth)}x${'</div>'.repeat(depth)}`;
  let old: string;
  try {
    old = `${time(() => convert(page, options)).toFixed(0)} ms`;
  } catch (error) {
    old = `fails (${(error as Error).message})`;
  }
  console.log(`  ${depth} nested divs: old ${old}   convertHtml ${time(() => convertHtml(page)).toFixed(0)} ms`);
}
const deep = `${'<div>'.repeat(136_000)}x${'</div>'.repeat(136_000)}`;
console.log(
  `  136,000 nested divs (1.5 MB, the issue's page): convertHtml ${time(() => convertHtml(deep)).toFixed(0)} ms (old: 23-25 s on a hosting server's main thread)`,
);
const shallow = `<ul>${'<li>item'.repeat(100_000)}</ul>`;
console.log(`  1 MB shallow list: old ${time(() => convert(shallow, options)).toFixed(0)} ms   convertHtml ${time(() => convertHtml(shallow)).toFixed(0)} ms`);
