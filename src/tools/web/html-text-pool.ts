import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../contracts/parse-options.js';
import { FairShare } from '../../worker-pool/fair-share.js';
import { workerEntry } from '../../paths.js';
import type { ConvertedHtml } from './convert-html.js';
import type { WorkBudget } from '../../contracts/work-budget.js';

const htmlTextPoolOptionsSchema = z.object({
  /** Pages converted at once (converter processes). Default: 2, or 1 on a one-CPU machine. */
  threads: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(() => Math.min(2, availableParallelism())),
  /** V8 old-generation heap per converter process, in MB: a page whose tree needs more is refused. Default 256. */
  maxHeapMb: integerOption(16, 256),
});

export type HtmlTextPoolOptions = z.input<typeof htmlTextPoolOptionsSchema>;

/**
 * Turns a page's HTML into text; aborts (and stops the work) when `signal` does. For `owner` (its fair
 * share of the converters), with the converter's CPU time charged to `budget`, which it first waits for.
 */
export type HtmlToText = (html: string, options: { signal: AbortSignal; owner?: string; budget?: WorkBudget }) => Promise<ConvertedHtml>;

/** What a converter process answers for one page. */
type ProcessAnswer = ConvertedHtml & { cpuMs: number };

/** Converter output on stderr kept to say why a process ended (V8 prints its out-of-memory report there). */
const STDERR_TAIL = 2048;

/** One converter process and the conversion it is doing, if any. */
interface Converter {
  child: ChildProcess;
  stderr: string;
  /** Set while it converts a page: settles that conversion. */
  settle?: (outcome: { answer: ProcessAnswer } | { ended: string }) => void;
  idleTimer?: NodeJS.Timeout;
}

/**
 * The processes web_fetch turns HTML into text in. Converting a page costs
 * CPU and memory that grow with what the page's server chose to send, so it
 * never runs on the main thread (a hosting server's every tenant waits on
 * that), nor in a worker thread: a page built to exhaust the converter's
 * heap must not take the server with it, and a worker thread's heap limit
 * may abort the whole process (nodejs/node#47224). Here each conversion runs
 * in a child process with its own heap limit (`maxHeapMb`) and no
 * environment of the server's; one that runs out of time is ended by killing
 * its process, one that runs out of heap ends alone, and the processes are
 * shared fairly between owners (FairShare: a tenant converting hostile
 * pages holds at most its share). An idle process is kept for the next page
 * for 30 s.
 */
export class HtmlTextPool {
  readonly #maxHeapMb: number;
  readonly #fair: FairShare;
  readonly #idle: Converter[] = [];
  readonly #live = new Set<Converter>();
  #closed = false;

  constructor(options: HtmlTextPoolOptions = {}) {
    const { threads, maxHeapMb } = parseOptions(htmlTextPoolOptionsSchema, options, 'HtmlTextPool');
    this.#fair = new FairShare(threads);
    this.#maxHeapMb = maxHeapMb;
  }

  /** The pids of the converter processes alive now: a conversion that was stopped took its process with it. */
  get pids(): number[] {
    return [...this.#live].flatMap((converter) => (converter.child.pid === undefined ? [] : [converter.child.pid]));
  }

  /** Conversions running in a process now (a converter with a page to settle). */
  get running(): number {
    return [...this.#live].filter((converter) => converter.settle !== undefined).length;
  }

  /**
   * The page's text. Rejects with `signal`'s reason when it aborts (the
   * process converting it is killed), and with an Error saying so when the
   * page needs more heap than a process has.
   */
  readonly convert: HtmlToText = async (html, { signal, owner = 'local', budget }) => {
    await budget?.admit(signal);
    const release = await this.#fair.acquire(owner, signal);
    const started = performance.now();
    let charged = false;
    let converter: Converter | undefined;
    try {
      signal.throwIfAborted();
      if (this.#closed) throw new Error('the HTML pool is closed');
      converter = this.#take();
      const taken = converter;
      const outcome = await new Promise<{ answer: ProcessAnswer } | { ended: string } | { aborted: true }>((resolve) => {
        const onAbort = () => resolve({ aborted: true });
        signal.addEventListener('abort', onAbort, { once: true });
        taken.settle = (result) => {
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        };
        taken.child.send(html);
      });
      taken.settle = undefined;
      if ('answer' in outcome) {
        const { cpuMs, ...converted } = outcome.answer;
        charged = true;
        budget?.charge(cpuMs);
        this.#putBack(taken);
        return converted;
      }
      this.#end(taken);
      if ('aborted' in outcome) throw signal.reason;
      throw new Error(outcome.ended);
    } finally {
      // A conversion whose process was ended sent no figure: the time it was given is charged.
      if (!charged && converter) budget?.charge(performance.now() - started);
      release();
    }
  };

  /** Kills every converter process; conversions under way fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const converter of [...this.#live]) this.#end(converter);
  }

  #take(): Converter {
    const idle = this.#idle.pop();
    if (idle) {
      clearTimeout(idle.idleTimer);
      idle.child.ref();
      idle.child.channel?.ref();
      return idle;
    }
    const child = fork(fileURLToPath(workerEntry('html-text-process.js')), [], {
      // Nothing of the server's environment (keys, tokens) in a process that reads hostile input.
      env: {},
      execArgv: [`--max-old-space-size=${this.#maxHeapMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const converter: Converter = { child, stderr: '' };
    this.#live.add(converter);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => (converter.stderr = (converter.stderr + text).slice(-STDERR_TAIL)));
    child.on('message', (answer: ProcessAnswer) => converter.settle?.({ answer }));
    child.on('error', () => this.#lost(converter, 'the converter could not be started'));
    // `close`, not `exit`: by then stderr has been read to its end (V8's out-of-memory report included).
    child.on('close', (code, exitSignal) => {
      const outOfMemory = /heap out of memory|Allocation failed/.test(converter.stderr);
      this.#lost(
        converter,
        outOfMemory
          ? 'its HTML is too large to turn into text (the converter ran out of memory)'
          : `the converter ended (${exitSignal ?? `exit code ${code}`})`,
      );
    });
    return converter;
  }

  /** Kept for the next page while idle (not keeping the server alive), ended after IDLE_MS. */
  #putBack(converter: Converter): void {
    if (this.#closed || !this.#live.has(converter)) return this.#end(converter);
    converter.child.unref();
    converter.child.channel?.unref();
    converter.idleTimer = setTimeout(() => this.#end(converter), IDLE_MS);
    converter.idleTimer.unref();
    this.#idle.push(converter);
  }

  #end(converter: Converter): void {
    clearTimeout(converter.idleTimer);
    this.#live.delete(converter);
    const at = this.#idle.indexOf(converter);
    if (at >= 0) this.#idle.splice(at, 1);
    if (converter.child.exitCode === null && converter.child.signalCode === null) converter.child.kill('SIGKILL');
  }

  /** A process that ended by itself: the page it was converting fails with the reason. */
  #lost(converter: Converter, reason: string): void {
    this.#end(converter);
    converter.settle?.({ ended: reason });
  }
}

/** How long an idle converter process is kept for the next page. */
const IDLE_MS = 30_000;

let shared: HtmlTextPool | undefined;

/** The process's HTML pool, made on first use; its idle threads end by themselves and never keep the process alive. */
export function sharedHtmlTextPool(): HtmlTextPool {
  shared ??= new HtmlTextPool();
  return shared;
}
