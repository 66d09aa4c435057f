/**
 * Entry of a process of the HTML pool (src/tools/web/html-text-pool.ts):
 * turns fetched pages into text, one at a time, for as long as the pool
 * keeps it. A process, not a worker thread: a page built to exhaust the
 * converter's heap must end this process alone, and a worker thread's heap
 * limit does not promise that (Node may abort the whole process instead,
 * nodejs/node#47224; seen here on Node 24 with 5 MB of `<p>`s).
 */
import { convertHtml } from '../src/tools/web/convert-html.js';
import { notAbovePriority } from './thread-priority.js';

// A tenant's page, never converted above an ordinary process's priority, whatever the server's event loop has.
notAbovePriority(0);

if (!process.send) throw new Error('workers/html-text-process.js must be started by the HTML pool (with an IPC channel)');
const send = process.send.bind(process);

process.on('message', (html: unknown) => {
  if (typeof html !== 'string') return;
  const start = process.cpuUsage();
  const converted = convertHtml(html);
  const used = process.cpuUsage(start);
  // The CPU time is the whole process's (the converter and its garbage collection): what the caller's budget is charged.
  send({ ...converted, cpuMs: (used.user + used.system) / 1000 });
});
// The pool closed its end (or died): nothing more will come.
process.on('disconnect', () => process.exit(0));
