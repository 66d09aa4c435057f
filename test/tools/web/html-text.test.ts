import test from 'ava';
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'htmlparser2';
import type { ChildNode } from 'domhandler';
import { convertHtml } from '../../../src/tools/web/convert-html.js';
import { capHtmlDepth } from '../../../src/tools/web/html-depth.js';
import { MAX_HTML_DEPTH } from '../../../src/tools/web/max-html-depth.js';
import { HtmlTextPool } from '../../../src/tools/web/html-text-pool.js';
import { eventually } from '../../helpers/docker.js';

/** The deepest element of the tree htmlparser2 makes of `html` (the parser html-to-text uses). */
function depthOf(html: string): number {
  let deepest = 0;
  const stack: Array<[ChildNode, number]> = parseDocument(html).children.map((node) => [node, 1]);
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!('children' in node)) continue;
    deepest = Math.max(deepest, depth);
    for (const child of node.children) stack.push([child, depth + 1]);
  }
  return deepest;
}

const N = 20_000;
/** Pages built to nest deep, each a variation of the 1.5 MB page of nested divs that held a hosting server 23-25 s. */
const HOSTILE: Record<string, string> = {
  'nested divs': `${'<div>'.repeat(N)}deep text${'</div>'.repeat(N)}<p>after</p>`,
  'unclosed divs': `${'<div>'.repeat(N)}deep text`,
  'mixed elements': `${'<section><span><b>'.repeat(N / 3)}deep text`,
  'end tags that close nothing': `${'<div></span>'.repeat(N)}deep text`,
  'self-closing outside svg': `${'<div/>'.repeat(N)}deep text`,
  'svg in svg': `${'<svg><g>'.repeat(N / 2)}deep text`,
  'raw text below the cap': `${'<div>'.repeat(MAX_HTML_DEPTH + 10)}<script>${'<div>'.repeat(N)}</script>deep text`,
};

for (const [name, html] of Object.entries(HOSTILE)) {
  test(`a hostile page (${name}) is flattened below the cap, its text kept`, (t) => {
    const capped = capHtmlDepth(html);
    t.true(capped.dropped > 0);
    t.true(depthOf(capped.html) <= MAX_HTML_DEPTH + 1, `depth ${depthOf(capped.html)}`);
    const converted = convertHtml(html);
    t.regex(converted.text, /deep text/);
    t.is(converted.flattened, capped.dropped);
  });
}

test('ordinary pages are left as they are: implied ends (p, li, td), void elements, svg', (t) => {
  const pages = [
    `<ul>${'<li>item'.repeat(5_000)}</ul>`,
    `${'<p>para'.repeat(5_000)}`,
    `<table>${'<tr><td>a<td>b'.repeat(2_000)}</table>`,
    `<div>${'<br><img src=x><input>'.repeat(2_000)}</div>`,
    `<svg>${'<path d="M0"/>'.repeat(2_000)}</svg><p>after</p>`,
    `<select>${'<option>x'.repeat(2_000)}</select>`,
  ];
  for (const page of pages) t.deepEqual(capHtmlDepth(page), { html: page, dropped: 0 }, page.slice(0, 40));
});

test('a conversion that is aborted ends: its process is killed and the next one runs', async (t) => {
  const pool = new HtmlTextPool({ threads: 1 });
  t.teardown(() => pool.close());
  // Flat and shallow, so not flattened: html-to-text takes seconds over it.
  const slow = '<p>a'.repeat(1_000_000);
  // A converter that is up takes the page at once: the conversion starts in it, and can only be stopped by ending it.
  await pool.convert('<p>warm</p>', { signal: new AbortController().signal });
  const [converter] = pool.pids;
  const controller = new AbortController();
  const converting = pool.convert(slow, { signal: controller.signal });
  t.true(await eventually(async () => pool.running === 1, 30_000, 5), 'the conversion runs');
  controller.abort(new Error('stop'));
  await t.throwsAsync(converting, { message: 'stop' });
  t.is(pool.running, 0);
  t.true(await eventually(async () => !pool.pids.includes(converter!), 30_000, 5), 'its process was killed');
  const next = await pool.convert('<p>next page</p>', { signal: new AbortController().signal });
  t.is(next.text, 'next page');
});

test("one owner's conversions take at most its share of the converters", async (t) => {
  const pool = new HtmlTextPool({ threads: 2 });
  t.teardown(() => pool.close());
  const slow = '<p>a'.repeat(1_000_000);
  const controller = new AbortController();
  t.teardown(() => controller.abort());
  const hostile = [1, 2, 3].map(() => pool.convert(slow, { signal: controller.signal, owner: 'hostile' }).catch(() => undefined));
  t.true(await eventually(async () => pool.running === 1, 30_000, 5));
  // The second converter is kept for an owner with nothing running: another owner's page is converted now.
  const other = await pool.convert('<p>other page</p>', { signal: new AbortController().signal, owner: 'other' });
  t.is(other.text, 'other page');
  t.is(pool.running, 1, "the hostile owner's first page is still being converted");
  controller.abort();
  await Promise.all(hostile);
});

test("a conversion's CPU time is charged to its owner's budget, which it waits for first; the result carries no figure", async (t) => {
  const pool = new HtmlTextPool({ threads: 1 });
  t.teardown(() => pool.close());
  const charges: number[] = [];
  let admits = 0;
  const budget = {
    admit: async () => void admits++,
    charge: (cpuMs: number) => void charges.push(cpuMs),
  };
  const converted = await pool.convert('<p>a</p>'.repeat(20_000), { signal: new AbortController().signal, owner: 'acme', budget });
  t.deepEqual(Object.keys(converted).sort(), ['flattened', 'text']);
  t.is(admits, 1);
  t.is(charges.length, 1);
  t.true(charges[0]! > 0, `charged ${charges[0]} ms`);
  // A budget that does not admit: the page never reaches a converter, and the abort ends the wait.
  const controller = new AbortController();
  const held = pool.convert('<p>b</p>', {
    signal: controller.signal,
    budget: {
      admit: (signal) => new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true })),
      charge: (cpuMs) => void charges.push(cpuMs),
    },
  });
  controller.abort(new Error('gave up'));
  await t.throwsAsync(held, { message: 'gave up' });
  t.is(charges.length, 1, 'nothing converted, nothing charged');
});

test("a page that exhausts the converter's heap fails alone, again and again: the server process survives and the next page converts", async (t) => {
  // In worker threads, at the default heap, six of these aborted the whole process on Node 24 (nodejs/node#47224).
  const pool = new HtmlTextPool({ threads: 2 });
  t.teardown(() => pool.close());
  const huge = '<p>a'.repeat(1_250_000);
  const outcomes = await Promise.all(
    Array.from({ length: 6 }, () =>
      pool.convert(huge, { signal: AbortSignal.timeout(120_000) }).then(
        () => 'converted',
        (error: Error) => error.message,
      ),
    ),
  );
  for (const outcome of outcomes) t.is(outcome, 'its HTML is too large to turn into text (the converter ran out of memory)');
  t.is((await pool.convert('<p>after</p>', { signal: new AbortController().signal })).text, 'after');
});

test("a converter process gets none of the server's environment", async (t) => {
  const pool = new HtmlTextPool({ threads: 1 });
  t.teardown(() => pool.close());
  process.env['TOOLCELL_TEST_SECRET'] = 'not-for-converters';
  t.teardown(() => delete process.env['TOOLCELL_TEST_SECRET']);
  await pool.convert('<p>x</p>', { signal: new AbortController().signal });
  const [pid] = pool.pids;
  const environ = await readFile(`/proc/${pid}/environ`, 'utf8');
  t.false(environ.includes('TOOLCELL_TEST_SECRET'));
  t.false(environ.includes('PATH='), environ);
});
