/**
 * Piscina worker entry of the HTML pool (src/tools/web/html-text-pool.ts):
 * turns a fetched page into text off the main thread, where the pool can
 * end it (by terminating this thread) when its time is up.
 */
import { convertHtml, type ConvertedHtml } from '../src/tools/web/convert-html.js';

export default function htmlText(html: string): ConvertedHtml {
  return convertHtml(html);
}
