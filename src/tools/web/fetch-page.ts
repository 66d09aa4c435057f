import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import type { WorkBudget } from '../../contracts/work-budget.js';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { deadline } from '../../deadline.js';
import type { EgressGate } from '../../egress/egress-gate.js';
import { untilAborted } from '../../until-aborted.js';
import { sharedHtmlTextPool, type HtmlToText } from './html-text-pool.js';

export interface FetchLimits {
  /** Bytes of body read at most; the rest is cut (and said). */
  maxBytes: number;
  /** Per URL, every phase of every hop included: name resolution, connection, TLS, headers, body. */
  timeoutMs: number;
  /** Redirects followed at most. */
  maxRedirects: number;
}

export const DEFAULT_FETCH_LIMITS: Readonly<FetchLimits> = Object.freeze({ maxBytes: 5 * 1024 * 1024, timeoutMs: 10_000, maxRedirects: 5 });

export type FetchedPage =
  | {
      ok: true;
      url: string;
      finalUrl: string;
      contentType: string;
      text: string;
      cut: boolean;
      /** HTML tags dropped for nesting deeper than MAX_HTML_DEPTH (their text is kept). */
      flattened?: number;
    }
  | { ok: false; url: string; reason: string };

/** How a page's HTML becomes text, and for whom (the HTML converters are shared fairly between owners). */
export interface PageConversion {
  htmlToText: HtmlToText;
  owner?: string;
  budget?: WorkBudget;
}

/** A lookup that answers with the address the gate checked, so no second resolution can swap it (DNS rebinding). */
function pinnedLookup(address: string): LookupFunction {
  const family = address.includes(':') ? 6 : 4;
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

function get(url: URL, address: string, signal: AbortSignal): Promise<IncomingMessage> {
  const options: RequestOptions = {
    method: 'GET',
    lookup: pinnedLookup(address),
    headers: {
      'user-agent': 'toolcell-web-fetch/1',
      accept: 'text/html,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.1',
      'accept-encoding': 'identity',
    },
    signal,
    agent: false,
  };
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, resolve);
    request.on('error', reject).end();
  });
}

async function readBody(response: IncomingMessage, maxBytes: number): Promise<{ body: Buffer; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    if (chunk.length >= room) {
      chunks.push(chunk.subarray(0, room));
      response.destroy();
      return { body: Buffer.concat(chunks), cut: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { body: Buffer.concat(chunks), cut: false };
}

/**
 * Page text for the model: HTML through html-to-text in the HTML converter processes
 * (links kept, images dropped; within the URL's time limit, which ends the
 * conversion too), text types as they are.
 */
async function pageText(
  contentType: string,
  body: Buffer,
  conversion: PageConversion & { phase: { converting: boolean } },
  signal: AbortSignal,
): Promise<{ text: string; flattened?: number } | undefined> {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const text = body.toString('utf8');
  if (type === 'text/html' || type === 'application/xhtml+xml' || (type === '' && /^\s*<(!doctype html|html)/i.test(text))) {
    conversion.phase.converting = true;
    const converted = await conversion.htmlToText(text, {
      signal,
      ...(conversion.owner !== undefined ? { owner: conversion.owner } : {}),
      ...(conversion.budget !== undefined ? { budget: conversion.budget } : {}),
    });
    return converted.flattened > 0 ? converted : { text: converted.text };
  }
  if (type.startsWith('text/') || type === 'application/json' || type.endsWith('+json') || type.endsWith('+xml') || type === 'application/xml' || type === '')
    return { text };
  return undefined;
}

/**
 * Fetches one URL on the host, under the sandbox's egress rules: every hop
 * (the URL and each redirect) is decided by the gate and connected to the
 * address it checked, so a listed name that resolves or redirects to
 * loopback, a private network or a metadata service is refused as it would
 * be from the sandbox. Bounded in bytes, time and redirects.
 */
export async function fetchPage(
  rawUrl: string,
  gate: EgressGate,
  limits: FetchLimits,
  signal: AbortSignal,
  conversion: PageConversion = { htmlToText: (html, how) => sharedHtmlTextPool().convert(html, how) },
): Promise<FetchedPage> {
  // One limit for the whole URL, started before the first lookup: a name
  // that never resolves, a TLS handshake that never ends, headers or a body
  // that never come, and the page's conversion to text, all end at the same time.
  const limit = deadline(limits.timeoutMs, signal);
  const phase = { converting: false };
  try {
    return await fetchWithin(rawUrl, gate, limits, limit.signal, { ...conversion, phase });
  } catch (error) {
    if (signal.aborted) throw error;
    const seconds = limits.timeoutMs / 1000;
    const reason = !limit.expired
      ? ((error as NodeJS.ErrnoException).code ?? (error as Error).message)
      : phase.converting
        ? `its HTML could not be turned into text within the URL's time limit of ${seconds} s`
        : `no answer within ${seconds} s`;
    return { ok: false, url: rawUrl, reason };
  } finally {
    limit.dispose();
  }
}

/** Throws when `signal` aborts, in whatever phase the fetch is. */
async function fetchWithin(
  rawUrl: string,
  gate: EgressGate,
  limits: FetchLimits,
  signal: AbortSignal,
  conversion: PageConversion & { phase: { converting: boolean } },
): Promise<FetchedPage> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, url: rawUrl, reason: 'not a valid URL' };
  }
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, url: rawUrl, reason: `${url.protocol} URLs are not fetched` };
    if (url.username || url.password) return { ok: false, url: rawUrl, reason: 'URLs with credentials are not fetched' };
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    // The lookup itself cannot be cancelled (getaddrinfo); the fetch stops waiting for it.
    const decision = await untilAborted(gate.decide(host, port), signal);
    if (decision === undefined) throw signal.reason;
    if (!decision.allowed)
      return { ok: false, url: rawUrl, reason: `refused ${host}:${port}${hop > 0 ? ` (redirected from ${rawUrl})` : ''}, ${decision.reason}` };
    const response = await get(url, decision.address, signal);
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.resume();
      if (hop >= limits.maxRedirects) return { ok: false, url: rawUrl, reason: `more than ${limits.maxRedirects} redirects` };
      url = new URL(response.headers.location, url);
      continue;
    }
    if (status < 200 || status >= 300) {
      response.resume();
      return { ok: false, url: rawUrl, reason: `HTTP ${status}` };
    }
    const contentType = String(response.headers['content-type'] ?? '');
    const { body, cut } = await readBody(response, limits.maxBytes);
    const page = await pageText(contentType, body, conversion, signal);
    if (page === undefined) return { ok: false, url: rawUrl, reason: `content type ${contentType || '(none)'} is not text` };
    return { ok: true, url: rawUrl, finalUrl: url.href, contentType, cut, ...page };
  }
}
