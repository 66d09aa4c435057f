import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../contracts/parse-options.js';
import { FairShare } from '../../worker-pool/fair-share.js';
import { workerEntry } from '../../paths.js';
import type { ConvertedHtml } from './convert-html.js';
import type { WorkBudget } from '../../contracts/work-budget.js';

const htmlTextPoolOptionsSchema = z.object({
  /** Pages converted at once. Default: 2, or 1 on a one-CPU machine. */
  threads: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(() => Math.min(2, availableParallelism())),
  /** V8 old-generation heap per thread, in MB: a page whose tree needs more is refused. Default 256. */
  maxHeapMb: integerOption(16, 256),
});

export type HtmlTextPoolOptions = z.input<typeof htmlTextPoolOptionsSchema>;

/**
 * Turns a page's HTML into text; aborts (and stops the work) when `signal` does. For `owner` (its fair
 * share of the threads), with the thread's CPU time charged to `budget`, which it first waits for.
 */
export type HtmlToText = (html: string, options: { signal: AbortSignal; owner?: string; budget?: WorkBudget }) => Promise<ConvertedHtml>;

/**
 * The threads web_fetch turns HTML into text in. Converting a page costs CPU
 * that grows with what the page's server chose to send, so it never runs on
 * the main thread (a hosting server's every tenant waits on that): here a
 * conversion that runs out of its time is ended by terminating its thread
 * (Piscina replaces it), one that runs out of heap fails alone, and the
 * threads are shared fairly between owners (FairShare: a tenant converting
 * hostile pages holds at most its share).
 */
export class HtmlTextPool {
  readonly #piscina: Piscina<string, ConvertedHtml & { cpuMs?: number }>;
  readonly #fair: FairShare;
  /** Conversions handed to Piscina and not settled: queued there until a thread is ready, or running. */
  #submitted = 0;

  constructor(options: HtmlTextPoolOptions = {}) {
    const { threads, maxHeapMb } = parseOptions(htmlTextPoolOptionsSchema, options, 'HtmlTextPool');
    this.#fair = new FairShare(threads);
    this.#piscina = new Piscina<string, ConvertedHtml & { cpuMs?: number }>({
      filename: workerEntry('html-text').href,
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: 30_000,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
    });
    // A thread that dies (heap limit) fails its task; Piscina replaces it.
    this.#piscina.on('error', () => {});
  }

  /** The ids of the threads alive now: a conversion that was stopped took its thread with it. */
  get threadIds(): number[] {
    return this.#piscina.threads.map((thread) => thread.threadId);
  }

  /** Conversions running in a thread now (handed to a ready thread, not waiting for one to start). */
  get running(): number {
    return Math.max(0, this.#submitted - this.#piscina.queueSize);
  }

  /**
   * The page's text. Rejects with `signal`'s reason when it aborts (the
   * thread converting it is terminated), and with an Error saying so when
   * the page needs more heap than a thread has.
   */
  readonly convert: HtmlToText = async (html, { signal, owner = 'local', budget }) => {
    await budget?.admit(signal);
    const release = await this.#fair.acquire(owner, signal);
    this.#submitted++;
    const started = performance.now();
    let charged = false;
    try {
      const { cpuMs, ...converted } = await this.#piscina.run(html, { signal });
      charged = true;
      budget?.charge(cpuMs ?? 0);
      return converted;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY')
        throw new Error('its HTML is too large to turn into text (the converter ran out of memory)');
      throw error;
    } finally {
      // A conversion whose thread was ended sent no figure: the time it was given is charged (it may have waited for a thread).
      if (!charged) budget?.charge(performance.now() - started);
      this.#submitted--;
      release();
    }
  };

  async close(): Promise<void> {
    await this.#piscina.destroy();
  }
}

let shared: HtmlTextPool | undefined;

/** The process's HTML pool, made on first use; its idle threads end by themselves and never keep the process alive. */
export function sharedHtmlTextPool(): HtmlTextPool {
  shared ??= new HtmlTextPool();
  return shared;
}
