import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../contracts/parse-options.js';
import { ToolErrorType } from '../../errors.js';
import type { HttpRefusal } from '../../mcp/server/serve-http.js';
import { DEFAULT_MAX_BODY_BYTES } from './read-body.js';

const MiB = 1024 * 1024;

export const bodyBudgetOptionsSchema = z.strictObject({
  /** One request body at most; a larger one gets 413 (by its Content-Length, before a byte is read). 4 MiB. */
  maxBodyBytes: integerOption(1024, DEFAULT_MAX_BODY_BYTES, 1024 * MiB),
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
});

export type BodyBudgetOptions = z.input<typeof bodyBudgetOptionsSchema>;

/** Who a body is read for: its tenant once authenticated, else only its source address. */
export interface BodyOwner {
  tenant?: string | undefined;
  source: string;
}

/** Why a body was refused, as the limit names it. */
export type BodyRefusal = 'requestBodyBytes' | 'bufferedBodyBytes' | 'serverBufferedBodyBytes' | 'bodyReadTimeout';

/**
 * Reads request bodies within a memory budget, so that no flood of requests,
 * stalled or not, can make the server hold more than it chose to. Each body's
 * bytes count against its tenant (or, unauthenticated, its source address)
 * and the server from the moment they are announced (Content-Length) or
 * arrive (chunked) until its answer is done; a body that does not fit is
 * refused before it is read (503 with Retry-After), one over `maxBodyBytes`
 * with 413, and one that does not arrive within `readTimeoutMs` with 408. A
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
  read(
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
    if (declared !== undefined && declared > options.maxBodyBytes) return Promise.resolve(refuse('requestBodyBytes'));
    if (declared !== undefined) {
      const full = reserve(declared);
      if (full) return Promise.resolve(refuse(full));
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
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          finish({ body: JSON.parse(text) });
        } catch {
          release();
          finish({ refusal: { status: 400, code: -32700, message: `Parse error: the body must be JSON of at most ${options.maxBodyBytes} bytes` } });
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
    const { maxBodyBytes, readTimeoutMs, retryAfterSeconds, tenantBytes, sourceBytes, serverBytes } = this.#options;
    const close = { Connection: 'close' };
    const busy = { ...close, 'Retry-After': String(retryAfterSeconds) };
    switch (limit) {
      case 'requestBodyBytes':
        return { status: 413, headers: close, type: ToolErrorType.REQUEST_TOO_LARGE, message: `The request body is over the limit of ${maxBodyBytes} bytes` };
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
