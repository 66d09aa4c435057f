/**
 * Piscina worker entry of the HTML pool (src/tools/web/html-text-pool.ts):
 * turns a fetched page into text off the main thread, where the pool can
 * end it (by terminating this thread) when its time is up.
 */
import { convertHtml, type ConvertedHtml } from '../src/tools/web/convert-html.js';
import { threadCpuMs } from './thread-cpu.js';

/** The page's text, with this thread's CPU time for it (what the caller's WorkBudget is charged). */
export default function htmlText(html: string): ConvertedHtml & { cpuMs: number } {
  const start = threadCpuMs();
  const converted = convertHtml(html);
  return { ...converted, cpuMs: Math.max(0, threadCpuMs() - start) };
}
