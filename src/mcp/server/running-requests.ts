import type { ServerResponse } from 'node:http';

/** A JSON-RPC request id (the spec allows strings and numbers; null is for errors about unreadable requests). */
export type RequestId = string | number;

/** The ids of the JSON-RPC requests in a POST body (one message or a batch): messages with a method and an id. */
export function requestIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  const ids: RequestId[] = [];
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const { method, id } = message as { method?: unknown; id?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}

/**
 * One session's requests still being answered, by id. JSON-RPC ids must be
 * unique among a client's outstanding requests, and the MCP SDK routes an
 * answer to a connection by its id alone: a second request with the id of a
 * running one took that one's answer, and the first one's connection stayed
 * open, with nothing left to end it, for as long as the client held it (a
 * tenant could hold any number of the server's sockets that way).
 */
export class RunningRequests {
  readonly #ids = new Set<RequestId>();

  /**
   * Claims the ids of a POST's requests until its response closes; returns
   * an id that is running already (or given twice in the body) instead, and
   * then claims nothing.
   */
  claim(ids: readonly RequestId[], res: ServerResponse): RequestId | undefined {
    const clash = ids.find((id, index) => this.#ids.has(id) || ids.indexOf(id) !== index);
    if (clash !== undefined) return clash;
    for (const id of ids) this.#ids.add(id);
    res.once('close', () => ids.forEach((id) => this.#ids.delete(id)));
    return undefined;
  }

  /** The ids still being answered. */
  ids(): RequestId[] {
    return [...this.#ids];
  }
}
