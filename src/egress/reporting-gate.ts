import { EgressGate, type EgressDecision, type EgressGateOptions } from './egress-gate.js';
import { egressEventOf, type EgressEvent } from './egress-event.js';

/**
 * An EgressGate that tells every decision as an EgressEvent: web_fetch
 * connects from the host, not through the proxy, so its connections (each
 * URL and every redirect hop) reach the egress log and the audit log this
 * way, with `via: "web_fetch"` and `client: "host"`.
 */
export class ReportingEgressGate extends EgressGate {
  readonly #onEvent: (event: EgressEvent) => void;

  constructor(options: EgressGateOptions & { onEvent: (event: EgressEvent) => void }) {
    super(options);
    this.#onEvent = options.onEvent;
  }

  override async decide(host: string, port: number): Promise<EgressDecision> {
    const decision = await super.decide(host, port);
    try {
      this.#onEvent(egressEventOf(decision, 'host', 'web_fetch'));
    } catch {
      // A log that cannot be written must not change what the fetch does.
    }
    return decision;
  }
}
