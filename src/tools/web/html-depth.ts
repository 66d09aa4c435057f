import { Tokenizer } from 'htmlparser2';
import { MAX_HTML_DEPTH } from './max-html-depth.js';

/** Elements without content or end tag (htmlparser2's list): they never nest. */
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);

/** Elements whose content the tokenizer reads as raw text up to their end tag: never dropped, or their text would be read as markup. */
const RAW_TEXT = new Set(['script', 'style', 'title', 'textarea', 'xmp']);

const P = ['p'];
const FORM = ['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'];
/** An opening tag that closes open elements first, as htmlparser2's parser does (`openImpliesClose`): `<li>` after `<li>`, `<div>` after `<p>`. */
const IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>(
  (
    [
      ['tr', ['tr', 'th', 'td']],
      ['th', ['th']],
      ['td', ['thead', 'th', 'td']],
      ['body', ['head', 'link', 'script']],
      ['li', ['li']],
      ['option', ['option']],
      ['optgroup', ['optgroup', 'option']],
      ['dd', ['dd', 'dt']],
      ['dt', ['dd', 'dt']],
      ['rt', ['rt', 'rp']],
      ['rp', ['rt', 'rp']],
      ['tbody', ['thead', 'tbody']],
      ['tfoot', ['thead', 'tbody']],
      ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((name) => [name, FORM] as const),
      ...[
        'h1',
        'h2',
        'h3',
        'h4',
        'h5',
        'h6',
        'p',
        'address',
        'article',
        'aside',
        'blockquote',
        'details',
        'div',
        'dl',
        'fieldset',
        'figcaption',
        'figure',
        'footer',
        'form',
        'header',
        'hr',
        'main',
        'nav',
        'ol',
        'pre',
        'section',
        'table',
        'ul',
      ].map((name) => [name, P] as const),
    ] as Array<readonly [string, readonly string[]]>
  ).map(([name, closes]) => [name, new Set(closes)]),
);
const FOREIGN = new Set(['math', 'svg']);
const HTML_INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);

export interface CappedHtml {
  html: string;
  /** Tags dropped because they were nested deeper than the cap (0: the page is unchanged). */
  dropped: number;
}

/**
 * The page with every element deeper than `maxDepth` flattened, in one
 * linear pass over htmlparser2's own tokenizer (the same tokens the parser
 * will see). It follows what the parser will make of the output (implied
 * closes, void elements, end tags that close several elements); where it is
 * unsure it counts deeper, never shallower, so the parser's stack never
 * passes the cap (plus one raw-text element). End tags are always kept:
 * an end tag can only make the tree shallower.
 */
export function capHtmlDepth(html: string, maxDepth: number = MAX_HTML_DEPTH): CappedHtml {
  /** Open elements of the output as the parser will have them, innermost last. */
  const open: string[] = [];
  /** Per open element: inside svg/math (true), or back in HTML (false); the parser self-closes `<x/>` only inside. */
  const foreign: boolean[] = [];
  /** Dropped start tags per name, so that their end tags go too. */
  const droppedOpen = new Map<string, number>();
  /** Source ranges to leave out, in order. */
  const cuts: Array<[number, number]> = [];
  let dropped = 0;
  let tag: { name: string; start: number; drop: boolean } | undefined;

  const endTag = (end: number, selfClosing: boolean) => {
    if (!tag) return;
    if (tag.drop) {
      cuts.push([tag.start, end + 1]);
      if (!selfClosing || !foreign.at(-1)) droppedOpen.set(tag.name, (droppedOpen.get(tag.name) ?? 0) + 1);
    } else if (selfClosing && foreign.at(-1) && open.at(-1) === tag.name) {
      open.pop();
    }
    tag = undefined;
  };

  const tokenizer = new Tokenizer(
    { xmlMode: false, decodeEntities: false },
    {
      onopentagname(start, end) {
        const name = html.slice(start, end).toLowerCase();
        const closes = IMPLIES_CLOSE.get(name);
        if (closes) while (open.length > 0 && closes.has(open.at(-1)!)) open.pop();
        const drop = !VOID.has(name) && !RAW_TEXT.has(name) && open.length >= maxDepth;
        tag = { name, start: start - 1, drop };
        if (drop) {
          dropped++;
          return;
        }
        if (VOID.has(name)) return;
        open.push(name);
        if (FOREIGN.has(name)) foreign.push(true);
        else if (HTML_INTEGRATION.has(name)) foreign.push(false);
      },
      onopentagend: (end) => endTag(end, false),
      onselfclosingtag: (end) => endTag(end, true),
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        const pending = droppedOpen.get(name) ?? 0;
        if (pending > 0) {
          droppedOpen.set(name, pending - 1);
          const close = html.indexOf('>', end);
          cuts.push([start - 2, close === -1 ? html.length : close + 1]);
          return;
        }
        if (FOREIGN.has(name) || HTML_INTEGRATION.has(name)) foreign.pop();
        if (VOID.has(name)) return;
        // Bounded by the cap: the stack never holds more than maxDepth + 1 names.
        const at = open.lastIndexOf(name);
        if (at !== -1) open.length = at;
      },
      onattribdata() {},
      onattribentity() {},
      onattribend() {},
      onattribname() {},
      oncdata() {},
      oncomment() {},
      ondeclaration() {},
      onend() {},
      onprocessinginstruction() {},
      ontext() {},
      ontextentity() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  // A start tag the input ended inside of.
  if (tag?.drop) cuts.push([tag.start, html.length]);
  if (cuts.length === 0) return { html, dropped: 0 };
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of cuts) {
    parts.push(html.slice(from, start));
    from = end;
  }
  parts.push(html.slice(from));
  return { html: parts.join(''), dropped };
}
