import type { ServerResponse } from 'node:http';
import type { HttpRefusal } from '../../mcp/server/http-replies.js';
import { quotaRefusal } from '../admission/quota-refusal.js';
import { outputOf } from './stalled-writes.js';

/** The names a refusal of OpenResponses gives its limit. */
type OpenResponsesLimit = 'openResponses' | 'unreadBytes';

/**
 * Output of a tenant's answers its clients have not taken, beyond which its
 * next request waits: a few of the largest answers (27 MB, a 20 MB image).
 */
export const MAX_UNREAD_BYTES = 32 * 1024 * 1024;

/** How long a refused client is told to wait: answers are taken, or their connections reset, within seconds. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Each tenant's POST requests whose answers are still open: calls running,
 * and answers written but not yet taken by the client. concurrentCalls
 * bounds the first; nothing bounded the second, and a client that never
 * reads had the server hold one answer after another in memory at the
 * tenant's call rate (stalled-writes.ts resets each one, but only after
 * its window). A tenant may have twice its concurrentCalls open, and no new
 * request while more than MAX_UNREAD_BYTES of its answers wait unread.
 */
export class OpenResponses {
  readonly #byTenant = new Map<string, Set<ServerResponse>>();

  /**
   * Counts `res` in for `tenant` until it closes, or says why not: twice
   * `concurrentCalls` open already, or too much of its output unread.
   */
  admit(tenant: string, concurrentCalls: number, res: ServerResponse): { refusal: HttpRefusal; limit: OpenResponsesLimit } | undefined {
    const open = this.#byTenant.get(tenant) ?? new Set<ServerResponse>();
    const limit = 2 * concurrentCalls;
    if (open.size >= limit)
      return refused(
        'openResponses',
        `quota_exceeded: ${open.size} requests of this tenant are still open (calls running, or answers its client has not read), at most ${limit} (twice concurrentCalls); read their answers or close their connections, then retry`,
      );
    const unread = [...open].reduce((sum, response) => sum + (response.socket ? outputOf(response.socket).waiting : 0), 0);
    if (unread > MAX_UNREAD_BYTES)
      return refused(
        'unreadBytes',
        `quota_exceeded: ${unread} bytes of this tenant's answers wait for its client to read them (at most ${MAX_UNREAD_BYTES}); read them, then retry`,
      );
    open.add(res);
    this.#byTenant.set(tenant, open);
    res.once('close', () => {
      open.delete(res);
      if (open.size === 0 && this.#byTenant.get(tenant) === open) this.#byTenant.delete(tenant);
    });
    return undefined;
  }
}

function refused(limit: OpenResponsesLimit, message: string): { refusal: HttpRefusal; limit: OpenResponsesLimit } {
  return { limit, refusal: quotaRefusal(limit, message, RETRY_AFTER_SECONDS) };
}
