import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../contracts/parse-options.js';
import type { WorkBudget } from '../../contracts/work-budget.js';
import { ToolErrorType } from '../../errors.js';
import type { HttpRefusal } from '../../mcp/server/serve-http.js';
import { DEFAULT_MAX_BODY_DEPTH, DEFAULT_MAX_BODY_VALUES, jsonShapeProblem } from '../../mcp/server/json-shape.js';
import { DEFAULT_MAX_BODY_BYTES } from './read-body.js';

const MiB = 1024 * 1024;

export const bodyBudgetOptionsSchema = z.strictObject({
  /** One request body at most; a larger one gets 413 (by its Content-Length, before a byte is read). 4 MiB. */
  maxBodyBytes: integerOption(1024, DEFAULT_MAX_BODY_BYTES, 1024 * MiB),
  /**
   * The most JSON values one body may have (objects, arrays and the items
   * after a comma), and how deep they may nest: a body past either gets 413
   * before it is parsed (json-shape.ts). 50,000 and 64.
   */
  maxBodyValues: integerOption(100, DEFAULT_MAX_BODY_VALUES, 10_000_000),
  maxBodyDepth: integerOption(8, DEFAULT_MAX_BODY_DEPTH, 100_000),
  /**
   * Body bytes one tenant may hold at once: read, or announced by a
   * Content-Length and being read, until its answer is done. Past it: 503
   * with Retry-After. 16 MiB (four bodies at the size limit).
   */
  tenantBytes: integerOption(1024, 16 * MiB, 64 * 1024 * MiB),
  /** The same for one source address when nobody authenticated the request (a server without authentication). 4 MiB. */
  sourceBytes: integerOption(1024, 4 * MiB, 64 * 1024 * MiB),
  /** Body bytes held server-wide, all tenants together. 64 MiB. */
  serverBytes: integerOption(1024, 64 * MiB, 64 * 1024 * MiB),
  /** A body must arrive whole within this from when its reading starts; then 408 and the connection is closed. 30 s. */
  readTimeoutMs: integerOption(10, 30_000, 3_600_000),
  /** The Retry-After of a 503 when a budget is full. 2 s. */
  retryAfterSeconds: integerOption(1, 2, 3600),
  /**
   * The longest a large body waits for its owner's share (`BodyOwner.budget`)
   * before it is refused with 429 and Retry-After: under the HTTP server's
   * 30 s request timeout, which would cut the connection without an answer.
   * 20 s.
   */
  maxBudgetWaitMs: integerOption(10, 20_000, 3_600_000),
});

export type BodyBudgetOptions = z.input<typeof bodyBudgetOptionsSchema>;

/** Who a body is read for: its tenant once authenticated, else only its source address. */
export interface BodyOwner {
  tenant?: string | undefined;
  source: string;
  /**
   * What parsing its bodies is charged to (a tenant's serverCpu share): a
   * large body waits until its owner may start more work before it is read,
   * and the event loop's time parsing it is charged after.
   */
  budget?: WorkBudget | undefined;
}

/** Why a body was refused, as the limit names it. */
export type BodyRefusal =
  'requestBodyBytes' | 'requestBodyValues' | 'requestBodyDepth' | 'bufferedBodyBytes' | 'serverBufferedBodyBytes' | 'bodyReadTimeout' | 'serverCpu';

/** A body over this (or of unknown length) waits for its owner's budget before it is read; a smaller one costs microseconds to parse. */
const WAIT_FOR_BUDGET_OVER_BYTES = 64 * 1024;

/**
 * Reads request bodies within a memory budget, so that no flood of requests,
 * stalled or not, can make the server hold more than it chose to. Each body's
 * bytes count against its tenant (or, unauthenticated, its source address)
 * and the server from the moment they are announced (Content-Length) or
 * arrive (chunked) until its answer is done; a body that does not fit is
 * refused before it is read (503 with Retry-After), one over `maxBodyBytes`
 * with 413, and one that does not arrive within `readTimeoutMs` with 408.
 * What parsing a body would build is bounded as well (`maxBodyValues`,
 * `maxBodyDepth`: 413 before it is parsed), and the event loop's time on a
 * tenant's bodies is charged to its share of the server's CPU: a large body
 * waits for that share before it is read. A
 * refused request's connection is closed, and what it still sends is
 * discarded, never kept.
 */
export class BodyBudget {
  readonly #options: z.output<typeof bodyBudgetOptionsSchema>;
  readonly #held = new Map<string, number>();
  #total = 0;

  constructor(options: BodyBudgetOptions = {}) {
    this.#options = parseOptions(bodyBudgetOptionsSchema, options, 'BodyBudget');
  }

  /** Body bytes held now, server-wide. */
  get bufferedBytes(): number {
    return this.#total;
  }

  /** Body bytes `owner`'s scope holds now (its tenant's, or its source's). */
  heldBy(owner: BodyOwner): number {
    return this.#held.get(scopeOf(owner)) ?? 0;
  }

  /**
   * The request's body as JSON, or the refusal to send. `onRefusal` hears
   * which limit refused it (for the audit log and the metrics).
   */
  async read(
    req: IncomingMessage,
    res: ServerResponse,
    owner: BodyOwner,
    onRefusal?: (limit: BodyRefusal) => void,
  ): Promise<{ body: unknown } | { refusal: HttpRefusal }> {
    const options = this.#options;
    const scope = scopeOf(owner);
    const scopeLimit = owner.tenant !== undefined ? options.tenantBytes : options.sourceBytes;
    let held = 0;
    const release = (): void => {
      if (held === 0) return;
      this.#total -= held;
      const left = (this.#held.get(scope) ?? 0) - held;
      if (left > 0) this.#held.set(scope, left);
      else this.#held.delete(scope);
      held = 0;
    };
    const reserve = (bytes: number): BodyRefusal | undefined => {
      if (this.#total + bytes > options.serverBytes) return 'serverBufferedBodyBytes';
      if ((this.#held.get(scope) ?? 0) + bytes > scopeLimit) return 'bufferedBodyBytes';
      this.#total += bytes;
      this.#held.set(scope, (this.#held.get(scope) ?? 0) + bytes);
      held += bytes;
      return undefined;
    };
    const refuse = (limit: BodyRefusal): { refusal: HttpRefusal } => {
      release();
      // Whatever the client still sends is read and dropped until the answer closes the connection.
      req.resume();
      onRefusal?.(limit);
      return { refusal: this.#refusal(limit, owner) };
    };
    // The reservation lasts until the answer is done: the parsed body lives as long as its call.
    res.once('close', release);

    const length = req.headers['content-length'];
    const declared = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
    if (declared !== undefined && declared > options.maxBodyBytes) return refuse('requestBodyBytes');
    if (declared !== undefined) {
      const full = reserve(declared);
      if (full) return refuse(full);
    }
    const budget = owner.budget;
    // Its reservation is held meanwhile, so a tenant's waiting bodies count against its bufferedBodyBytes.
    if (budget && (declared === undefined || declared > WAIT_FOR_BUDGET_OVER_BYTES)) {
      const admission = await admitted(req, budget, options.maxBudgetWaitMs);
      if (admission === 'waited too long') return refuse('serverCpu');
      if (admission === 'gone') {
        release();
        return { refusal: { status: 400, message: 'The request was aborted' } };
      }
    }
    return new Promise((resolve) => {
      let chunks: Buffer[] = [];
      let size = 0;
      const finish = (result: { body: unknown } | { refusal: HttpRefusal }): void => {
        clearTimeout(timer);
        req.off('data', onData).off('end', onEnd).off('error', onGone).off('aborted', onGone);
        chunks = [];
        resolve(result);
      };
      const timer = setTimeout(() => finish(refuse('bodyReadTimeout')), options.readTimeoutMs);
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        if (size > options.maxBodyBytes) return finish(refuse('requestBodyBytes'));
        // A chunked body is counted as it comes; one with a Content-Length was counted whole up front.
        if (declared === undefined) {
          const full = reserve(chunk.length);
          if (full) return finish(refuse(full));
        }
        chunks.push(chunk);
      };
      const onEnd = (): void => {
        // The event loop's own work on the body, charged to its owner: a tenant that sends large bodies faster
        // than its share waits before the next is read, instead of taking the event loop from everyone.
        const started = performance.now();
        try {
          const bytes = Buffer.concat(chunks);
          const shape = jsonShapeProblem(bytes, { maxValues: options.maxBodyValues, maxDepth: options.maxBodyDepth });
          if (shape) return finish(refuse(shape === 'values' ? 'requestBodyValues' : 'requestBodyDepth'));
          finish({ body: JSON.parse(bytes.toString('utf8')) });
        } catch {
          release();
          finish({ refusal: { status: 400, code: -32700, message: `Parse error: the body must be JSON of at most ${options.maxBodyBytes} bytes` } });
        } finally {
          budget?.charge(performance.now() - started);
        }
      };
      const onGone = (): void => {
        release();
        finish({ refusal: { status: 400, message: 'The request was aborted' } });
      };
      req.on('data', onData).on('end', onEnd).on('error', onGone).on('aborted', onGone);
    });
  }

  #refusal(limit: BodyRefusal, owner: BodyOwner): HttpRefusal {
    const { maxBodyBytes, maxBodyValues, maxBodyDepth, maxBudgetWaitMs, readTimeoutMs, retryAfterSeconds, tenantBytes, sourceBytes, serverBytes } =
      this.#options;
    const close = { Connection: 'close' };
    const busy = { ...close, 'Retry-After': String(retryAfterSeconds) };
    switch (limit) {
      case 'requestBodyBytes':
        return { status: 413, headers: close, type: ToolErrorType.REQUEST_TOO_LARGE, message: `The request body is over the limit of ${maxBodyBytes} bytes` };
      case 'requestBodyValues':
      case 'requestBodyDepth':
        return {
          status: 413,
          headers: close,
          type: ToolErrorType.REQUEST_TOO_LARGE,
          data: { limit: limit },
          message:
            limit === 'requestBodyValues'
              ? `The request body has more than ${maxBodyValues} JSON values (objects, arrays and list items); no tool call needs that many`
              : `The request body nests objects and arrays deeper than ${maxBodyDepth} levels; no tool call needs that`,
        };
      case 'serverCpu': {
        const seconds = Math.ceil(maxBudgetWaitMs / 1000);
        return {
          status: 429,
          headers: { ...close, 'Retry-After': String(seconds) },
          type: ToolErrorType.QUOTA_EXCEEDED,
          data: { limit: limit },
          message: `quota_exceeded: your tenant's share of the server's CPU (serverCpu) is used up for the next ${seconds} s or more; retry after that`,
        };
      }
      case 'bodyReadTimeout':
        return { status: 408, headers: close, message: `The request body did not arrive within ${Math.ceil(readTimeoutMs / 1000)} s` };
      case 'bufferedBodyBytes': {
        const who = owner.tenant !== undefined ? 'your tenant' : 'your address';
        const bytes = owner.tenant !== undefined ? tenantBytes : sourceBytes;
        return {
          status: 503,
          headers: busy,
          type: ToolErrorType.QUOTA_EXCEEDED,
          data: { limit: limit },
          message: `quota_exceeded: the request bodies ${who} has in flight would pass ${bytes} bytes (bufferedBodyBytes); retry after ${retryAfterSeconds} s`,
        };
      }
      case 'serverBufferedBodyBytes':
        return {
          status: 503,
          headers: busy,
          data: { limit: limit },
          message: `The server holds all the request bodies it buffers (${serverBytes} bytes); retry after ${retryAfterSeconds} s`,
        };
    }
  }
}

function scopeOf(owner: BodyOwner): string {
  return owner.tenant !== undefined ? `tenant:${owner.tenant}` : `source:${owner.source}`;
}

/** Once `budget` admits more work: 'admitted'; or the request ended first, or `maxWaitMs` passed (the wait is given up). */
async function admitted(req: IncomingMessage, budget: WorkBudget, maxWaitMs: number): Promise<'admitted' | 'gone' | 'waited too long'> {
  const stop = new AbortController();
  const onGone = (): void => stop.abort('gone');
  req.once('close', onGone);
  const timer = setTimeout(() => stop.abort('waited too long'), maxWaitMs);
  try {
    await budget.admit(stop.signal);
    return 'admitted';
  } catch {
    return stop.signal.reason === 'waited too long' ? 'waited too long' : 'gone';
  } finally {
    clearTimeout(timer);
    req.off('close', onGone);
  }
}
