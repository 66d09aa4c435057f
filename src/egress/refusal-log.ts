import type { EgressEvent } from './egress-event.js';

const KEPT_PER_CLIENT = 64;

/**
 * The latest refused connections of each sandbox, so a call can report the
 * ones made while it ran. Bounded: a command that hammers a refused host keeps
 * only its last 64 refusals.
 */
export class RefusalLog {
  readonly #byClient = new Map<string, { at: number; event: EgressEvent }[]>();

  record(event: EgressEvent, at = Date.now()): void {
    const list = this.#byClient.get(event.client) ?? [];
    list.push({ at, event });
    if (list.length > KEPT_PER_CLIENT) list.splice(0, list.length - KEPT_PER_CLIENT);
    this.#byClient.set(event.client, list);
  }

  /** Refusals of `client` at or after `since` (ms since the epoch), each host:port once. */
  since(client: string, since: number): EgressEvent[] {
    const seen = new Set<string>();
    const out: EgressEvent[] = [];
    for (const { at, event } of this.#byClient.get(client) ?? []) {
      const key = `${event.host}:${event.port}`;
      if (at < since || seen.has(key)) continue;
      seen.add(key);
      out.push(event);
    }
    return out;
  }

  forget(client: string): void {
    this.#byClient.delete(client);
  }
}
