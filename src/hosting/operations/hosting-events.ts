/**
 * What happens on a hosting server, as events. The audit log writes each as
 * one JSON line; the metrics count them. Both observe the same stream, so an
 * audited refusal is always a counted one. Fields never hold a presented
 * secret; tool arguments are redacted by the audit log before they are written.
 */
import type { EgressEvent } from '../../egress/egress-event.js';

/** `abandoned`: no request and no open stream for abandonedSeconds (its client is gone); `tenant`: closed by its tenant (DELETE /sessions/<id>). */
export type SessionCloseReason =
  'client' | 'idle' | 'abandoned' | 'max_lifetime' | 'tenant' | 'tenant_removed' | 'tenant_moved' | 'key_revoked' | 'admin' | 'shutdown' | 'error';

export type CallOutcome = 'success' | 'error' | 'cancelled' | 'denied';

export type HostingEvent =
  | { event: 'auth_failure'; remoteAddress: string; reason: string; tenant?: string }
  | { event: 'session_open'; tenant: string; subject: string; via: 'api_key' | 'oidc'; session: string }
  | { event: 'session_close'; tenant: string; session: string; reason: SessionCloseReason }
  | {
      event: 'tool_call';
      tenant: string;
      session: string;
      callId: string;
      tool: string;
      args: Record<string, unknown>;
      /** `allow` (the call was let run, by a policy rule or the approval mode) or `deny` (refused before it ran). */
      decision: 'allow' | 'deny';
      outcome: CallOutcome;
      errorType?: string;
      exitCode?: number | null;
      durationMs: number;
      outputBytes: number;
    }
  | { event: 'quota_refusal'; tenant: string; limit: string; session?: string }
  | { event: 'admin'; action: string; target?: string; tenant?: string }
  | ({
      /** A connection a tenant's sandbox made through its egress proxy, or its web_fetch made from the host (tenant-network.ts): the egress log's record. */
      event: 'egress';
      tenant: string;
    } & Omit<EgressEvent, 'time'>);

/** The `event` names, for exhaustive handling. */
export type HostingEventName = HostingEvent['event'];

/**
 * Receives every hosting event. `record` resolves once the event is durable
 * where that matters (the audit log's line is written): the server awaits it
 * before answering a tool call.
 */
export interface HostingObserver {
  record(event: HostingEvent): void | Promise<void>;
}
