import { convert } from 'html-to-text';
import { capHtmlDepth } from './html-depth.js';
import { MAX_HTML_DEPTH } from './max-html-depth.js';

/** A page's text, and how many of its tags were dropped for nesting deeper than MAX_HTML_DEPTH. */
export interface ConvertedHtml {
  text: string;
  flattened: number;
}

const OPTIONS = {
  wordwrap: false as const,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
  ],
  // The tree is already no deeper than this; html-to-text's own limit is the second fence.
  limits: { maxDepth: MAX_HTML_DEPTH + 1 },
};

/**
 * HTML to text for the model (links kept, images and scripts dropped), the
 * page first flattened below MAX_HTML_DEPTH. Synchronous and CPU-bound: it
 * runs in the HTML converter processes (html-text-pool.ts), never in the
 * server's own process.
 */
export function convertHtml(html: string): ConvertedHtml {
  const capped = capHtmlDepth(html);
  return { text: convert(capped.html, OPTIONS), flattened: capped.dropped };
}
