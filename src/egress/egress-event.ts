import type { EgressDecision } from './egress-gate.js';

/**
 * One connection the egress proxy or web_fetch let through or refused: the
 * audit trail of the sandbox's network (the local egress log, the hosting
 * audit log's `egress` lines).
 */
export interface EgressEvent {
  time: string;
  /** The connecting sandbox's address on the egress network; `host` for web_fetch, which fetches on the host. */
  client: string;
  action: 'allowed' | 'refused';
  /** `connect` (a CONNECT tunnel, HTTPS), `http` (a forwarded plain HTTP request), or `web_fetch` (one hop of a web_fetch URL, redirects included). */
  via: 'connect' | 'http' | 'web_fetch';
  host: string;
  port: number;
  /** The address connected to (allowed only). */
  address?: string;
  /** The allowlist entry that let it through (allowed only). */
  entry?: string;
  /** Why it was refused, or why an allowed connection then failed. */
  reason?: string;
  /**
   * A count record of the egress log (egress-log.ts): this many more
   * connections like this one came between `since` and `until`. Absent: the
   * line stands for one connection.
   */
  count?: number;
  since?: string;
  until?: string;
}

/** The line a call's result carries when the sandbox refused a connection it made, so the model knows why its client failed. */
export function describeRefusal(event: Pick<EgressEvent, 'host' | 'port' | 'reason'>): string {
  return `network: refused ${event.host.includes(':') ? `[${event.host}]` : event.host}:${event.port}, ${event.reason ?? 'not allowed'}`;
}

/** The event of one gate decision, as the proxy and web_fetch report it. */
export function egressEventOf(decision: EgressDecision, client: string, via: EgressEvent['via']): EgressEvent {
  const time = new Date().toISOString();
  return decision.allowed
    ? { time, client, action: 'allowed', via, host: decision.host, port: decision.port, address: decision.address, entry: decision.entry }
    : { time, client, action: 'refused', via, host: decision.host, port: decision.port, reason: decision.reason };
}
