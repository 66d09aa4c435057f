import type { IncomingMessage } from 'node:http';

/**
 * Who sent a request, once its credentials checked out. A tenant is the unit
 * of trust; the subject is who inside it (a key id, or a token's `sub`), so a
 * session stays bound to the subject that opened it.
 */
export interface Principal {
  readonly tenant: string;
  readonly subject: string;
  /** How the credentials were checked: a subject is a name only within its kind (see `sameIdentity`). */
  readonly via: 'api_key' | 'oidc';
  /** With `api_key`: the id of the key that was presented, so that revoking it can end the sessions it opened. */
  readonly keyId?: string;
  /** With `oidc`: the issuer of the token (its `iss`), whose namespace the `sub` belongs to. */
  readonly issuer?: string;
}

/**
 * Whether two principals are one identity, the test a session's owner must
 * pass on every request: the same tenant, the same kind of credential and the
 * same name within that kind (the key id of an API key; the issuer and `sub`
 * of a token). A key id and a `sub` are names in different spaces: an issuer
 * may hand out any `sub`, a key id included, so neither may stand for the other.
 */
export function sameIdentity(a: Principal, b: Principal): boolean {
  return a.tenant === b.tenant && a.via === b.via && a.subject === b.subject && a.keyId === b.keyId && a.issuer === b.issuer;
}

/** Why credentials were refused: logged and audited, never shown to the client beyond a generic 401. */
export type AuthFailureReason = 'missing_credentials' | 'malformed_credentials' | 'unknown_key' | 'revoked_key' | 'invalid_token' | 'unknown_tenant';

/**
 * A refusal may carry a `detail` from a closed set of the authenticator's own
 * (`expired`, `issuer_unreachable`, …): the audit log and the metrics record
 * `reason:detail` (`invalid_token:expired`), never the presented credential.
 */
export type AuthOutcome = { ok: true; principal: Principal } | { ok: false; reason: AuthFailureReason; detail?: string };

/** The refusal as the audit log's `reason` and the metrics' label: `invalid_token:expired`, or the reason alone. */
export function refusalLabel(outcome: { reason: AuthFailureReason; detail?: string }): string {
  return outcome.detail === undefined || outcome.detail === outcome.reason ? outcome.reason : `${outcome.reason}:${outcome.detail}`;
}

/**
 * Checks a request's `Authorization` header. API keys and OIDC access tokens
 * are two implementations; the server tries them in order and takes the
 * first that recognises the credential's shape.
 */
export interface Authenticator {
  /** True when the bearer value looks like this authenticator's kind (an API key prefix, a JWT's three parts). */
  recognises(bearer: string): boolean;
  authenticate(bearer: string, request: IncomingMessage): Promise<AuthOutcome>;
}
