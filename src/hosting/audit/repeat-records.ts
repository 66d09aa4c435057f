import type { OverflowCount, RepeatCount, RepeatKey } from '../../telemetry/repeat-aggregator.js';
import type { HostingEvent } from '../operations/hosting-events.js';

/**
 * Which audit events a flood can repeat, and what one count of them is:
 * - `auth_failure` per source address and reason (and tenant, when named);
 * - `quota_refusal` per tenant and limit;
 * - `egress` per tenant, action and destination (host, port, how, reason).
 * Tool calls, sessions and admin actions are never counted: each has its own
 * line (a call's before its answer), and their rate is held by the limits.
 * Past the interval's distinct keys, events are counted per event and tenant.
 */
export function repeatKeyOf(event: HostingEvent): RepeatKey | undefined {
  switch (event.event) {
    case 'auth_failure':
      return keyed(event.event, event.tenant, [event.remoteAddress, event.reason]);
    case 'quota_refusal':
      return keyed(event.event, event.tenant, [event.limit]);
    case 'egress':
      return keyed(event.event, event.tenant, [event.action, event.via, event.host, String(event.port), event.reason ?? '']);
    default:
      return undefined;
  }
}

function keyed(name: string, tenant: string | undefined, parts: string[]): RepeatKey {
  const group = JSON.stringify([name, tenant ?? null]);
  return { key: JSON.stringify([name, tenant ?? null, ...parts]), group };
}

/**
 * The audit line of a count: for repeats, the first event's fields with
 * `count` (how many more came), `since` and `until`; for the keys past the
 * limit, a `log_summary` line naming the event, its tenant, the count and how
 * many distinct sources or destinations it covers.
 */
export function countEntry(count: RepeatCount<HostingEvent> | OverflowCount<HostingEvent>, now: Date): Record<string, unknown> {
  const span = { since: new Date(count.since).toISOString(), until: new Date(count.until).toISOString() };
  const time = now.toISOString();
  if (count.kind === 'repeats') {
    const { event, ...fields } = count.first;
    const tenant = 'tenant' in fields && fields.tenant !== undefined ? fields.tenant : null;
    const { count: _own, since: _since, until: _until, ...rest } = fields as typeof fields & { count?: number; since?: string; until?: string };
    return { time, event, tenant, ...rest, count: count.count, ...span };
  }
  const tenant = 'tenant' in count.sample && count.sample.tenant !== undefined ? count.sample.tenant : null;
  return { time, event: 'log_summary', tenant, of: count.sample.event, count: count.count, distinct: count.keys, ...span };
}
