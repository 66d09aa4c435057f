import { z } from 'zod';
import type { WorkBudget } from '../../contracts/work-budget.js';
import { EgressGate } from '../../egress/egress-gate.js';
import { SETTINGS_WORDING, type EgressWording } from '../../egress/egress-wording.js';
import type { EgressEvent } from '../../egress/egress-event.js';
import { ReportingEgressGate } from '../../egress/reporting-gate.js';
import { mapResolver } from '../../egress/resolver.js';
import { ToolErrorType } from '../../errors.js';
import { BaseTool } from '../base-tool.js';
import { validateWithZod, zodToParametersJsonSchema } from '../parameters.js';
import { toolErrorResult } from '../results.js';
import type { ToolConfirmationDetails, ToolResult, ValidationResult } from '../tool.js';
import { DEFAULT_FETCH_LIMITS, fetchPage, type FetchedPage, type FetchLimits, type PageConversion } from './fetch-page.js';
import { MAX_HTML_DEPTH } from './max-html-depth.js';
import { sharedHtmlTextPool, type HtmlToText } from './html-text-pool.js';
import { extractUrls, MAX_URLS } from './prompt-urls.js';

export const WEB_FETCH_TOOL_NAME = 'web_fetch';

/** Characters of page text the model gets in all, shared between the pages (Gemini CLI's budget). */
const MAX_TEXT_CHARS = 100_000;
/** URLs fetched at once. */
const PARALLEL_FETCHES = 4;

const parameters = z.strictObject({
  prompt: z
    .string()
    .min(1)
    .max(100_000)
    .describe(
      'A comprehensive prompt that includes the URL(s) (up to 20) to fetch and specific instructions on how to process their content (e.g., "Summarize https://example.com/article and extract key points from https://another.com/data"). Must contain at least one URL starting with http:// or https://.',
    ),
});

export type WebFetchParams = z.infer<typeof parameters> & { urls: string[] };

/** The pages' text and what to do with it, for a model to answer the prompt from. */
export interface WebFetchSummaryInput {
  prompt: string;
  pages: { url: string; text: string }[];
}

export interface WebFetchToolOptions {
  /** `sandbox.network.allow`: the host-side fetch obeys the sandbox's egress rules. Empty: nothing is fetched. */
  allow: readonly string[];
  /** Names resolved from this map instead of DNS (tests; pinned names). */
  hosts?: Readonly<Record<string, string | readonly string[]>>;
  /** How refusals name the list and its absence; default the settings' (a hosting tenant gets its own). */
  wording?: EgressWording;
  /** Answers the prompt from the pages through the model (set when a Gemini API key is configured); without it the text itself is returned. */
  summarize?: (input: WebFetchSummaryInput, signal: AbortSignal) => Promise<string>;
  limits?: Partial<FetchLimits>;
  /**
   * Every connection web_fetch allowed or refused (each URL and every
   * redirect hop), as the egress proxy reports the sandbox's: the egress
   * log locally, the audit log's `egress` lines on a hosting server.
   */
  onEgress?: (event: EgressEvent) => void;
  /**
   * Whose pages these are, for the fair share of the HTML converters (a hosting
   * server passes the tenant's name). Default `local`.
   */
  owner?: string;
  /** What turning its pages into text is charged to, and waits for (a hosting tenant's share of the server's CPU). */
  budget?: WorkBudget;
  /** Where HTML becomes text. Default: the process's HTML converters (html-text-pool.ts). */
  htmlToText?: HtmlToText;
}

/**
 * `web_fetch {prompt}`, as Gemini CLI defines it: fetches the http(s) URLs
 * named in the prompt (up to 20; GitHub blob pages as raw files) and answers
 * the prompt from them. The fetch runs on the host, so it is held to the
 * sandbox's egress rules (sandbox.network.allow, checked for every redirect
 * hop, public addresses only unless listed): otherwise it would be a way
 * around them, and a server-side request forgery. It asks first (an `info`
 * confirmation listing the URLs). Its own work on the main thread is
 * network waits; a page's HTML is turned into text in the HTML converter processes,
 * flattened below MAX_HTML_DEPTH and within the URL's time limit.
 */
export class WebFetchTool extends BaseTool<WebFetchParams> {
  readonly #gate: EgressGate;
  readonly #allowsAnything: boolean;
  readonly #summarize: WebFetchToolOptions['summarize'];
  readonly #limits: FetchLimits;
  readonly #wording: EgressWording;
  readonly #conversion: PageConversion;

  constructor(options: WebFetchToolOptions) {
    const wording = options.wording ?? SETTINGS_WORDING;
    super({
      name: WEB_FETCH_TOOL_NAME,
      displayName: 'WebFetch',
      description: `Processes content from URL(s) embedded in a prompt. Include up to 20 URLs and instructions (e.g., summarize, extract specific data) directly in the 'prompt' parameter. Only hosts listed in ${wording === SETTINGS_WORDING ? "the sandbox's network allowlist (sandbox.network.allow)" : wording.list} can be fetched; private and local addresses are refused.`,
      kind: 'fetch',
      parametersJsonSchema: zodToParametersJsonSchema(parameters),
    });
    this.#wording = wording;
    const gate = { allow: options.allow, wording, ...(options.hosts ? { resolver: mapResolver(options.hosts) } : {}) };
    this.#gate = options.onEgress ? new ReportingEgressGate({ ...gate, onEvent: options.onEgress }) : new EgressGate(gate);
    this.#allowsAnything = options.allow.length > 0;
    this.#summarize = options.summarize;
    this.#limits = { ...DEFAULT_FETCH_LIMITS, ...options.limits };
    this.#conversion = {
      htmlToText: options.htmlToText ?? ((html, how) => sharedHtmlTextPool().convert(html, how)),
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
      ...(options.budget !== undefined ? { budget: options.budget } : {}),
    };
  }

  validateParams(raw: unknown): ValidationResult<WebFetchParams> {
    const checked = validateWithZod(parameters, raw);
    if (!checked.ok) return checked;
    const urls = extractUrls(checked.params.prompt);
    if (urls.length === 0) return { ok: false, error: 'params/prompt: must contain at least one URL starting with http:// or https://' };
    if (urls.length > MAX_URLS) return { ok: false, error: `params/prompt: holds ${urls.length} URLs; at most ${MAX_URLS} can be fetched at once` };
    return { ok: true, params: { ...checked.params, urls } };
  }

  describe(params: WebFetchParams): string {
    const shown = params.prompt.length > 100 ? `${params.prompt.slice(0, 97)}...` : params.prompt;
    return `Processing URLs and instructions from prompt: "${shown}"`;
  }

  override shouldConfirmExecute(params: WebFetchParams): Promise<ToolConfirmationDetails | false> {
    return Promise.resolve({ type: 'info', title: 'Confirm Web Fetch', prompt: params.prompt, urls: params.urls });
  }

  async execute(params: WebFetchParams, signal: AbortSignal): Promise<ToolResult> {
    const pages = await this.#fetchAll(params.urls, signal);
    const fetched = pages.filter((page): page is Extract<FetchedPage, { ok: true }> => page.ok);
    const failures = pages.filter((page): page is Extract<FetchedPage, { ok: false }> => !page.ok).map((page) => `${page.url}: ${page.reason}`);
    if (fetched.length === 0) {
      const hint = this.#allowsAnything ? '' : ` ${this.#wording.none}`;
      return toolErrorResult(ToolErrorType.WEB_FETCH_FAILED, `Could not fetch any URL of the prompt. ${failures.join('; ')}.${hint}`);
    }
    const budget = Math.floor(MAX_TEXT_CHARS / fetched.length);
    const texts = fetched.map((page) => ({ url: page.finalUrl, text: flattenedNote(page.flattened) + clip(page.text, budget, page.cut) }));
    const sources = `Sources:\n${fetched.map((page, index) => `[${index + 1}] ${page.url}${page.finalUrl !== page.url ? ` (redirected to ${page.finalUrl})` : ''}`).join('\n')}`;
    const failed = failures.length > 0 ? `\n\nNot fetched:\n${failures.join('\n')}` : '';
    const display = `Fetched ${fetched.length} of ${pages.length} URL${pages.length === 1 ? '' : 's'}${failures.length > 0 ? ` (${failures.length} failed)` : ''}`;
    if (this.#summarize) {
      try {
        const answer = await this.#summarize({ prompt: params.prompt, pages: texts }, signal);
        return { llmContent: `${answer}\n\n${sources}${failed}`, returnDisplay: `${display}, answered through the model` };
      } catch (error) {
        if (signal.aborted) throw error;
        // The model being unavailable is no reason to lose the pages: fall through to the text.
      }
    }
    const body = texts.map((page, index) => `--- [${index + 1}] ${page.url} ---\n${page.text}`).join('\n\n');
    return { llmContent: `Content of the URLs for the prompt "${params.prompt}":\n\n${body}\n\n${sources}${failed}`, returnDisplay: display };
  }

  async #fetchAll(urls: string[], signal: AbortSignal): Promise<FetchedPage[]> {
    const results: FetchedPage[] = new Array(urls.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < urls.length) {
        const index = next++;
        results[index] = await fetchPage(urls[index]!, this.#gate, this.#limits, signal, this.#conversion);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_FETCHES, urls.length) }, worker));
    return results;
  }
}

function clip(text: string, budget: number, cut: boolean): string {
  const trimmed = text.trim();
  if (trimmed.length <= budget && !cut) return trimmed;
  return `${trimmed.slice(0, budget)}\n[... the page was cut here: it is longer than this call's share of ${MAX_TEXT_CHARS} characters ...]`;
}

function flattenedNote(flattened: number | undefined): string {
  return flattened ? `[... ${flattened} HTML tags nested deeper than ${MAX_HTML_DEPTH} levels were dropped; their text is kept ...]\n` : '';
}
