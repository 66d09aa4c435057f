/** One connection the egress proxy let through or refused: the audit trail of the sandbox's network. */
export interface EgressEvent {
  time: string;
  /** The connecting sandbox's address on the egress network. */
  client: string;
  action: 'allowed' | 'refused';
  /** `connect` (a CONNECT tunnel, HTTPS) or `http` (a forwarded plain HTTP request). */
  via: 'connect' | 'http';
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
