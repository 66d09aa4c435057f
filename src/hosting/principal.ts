import type { IncomingMessage } from 'node:http';

/**
 * Who sent a request, once its credentials checked out. A tenant is the unit
 * of trust; the subject is who inside it (a key id, or a token's `sub`), so a
 * session stays bound to the subject that opened it.
 */
export interface Principal {
  readonly tenant: string;
  readonly subject: string;
  /** How the credentials were checked. */
  readonly via: 'api_key' | 'oidc';
  /** With `api_key`: the id of the key that was presented, so that revoking it can end the sessions it opened. */
  readonly keyId?: string;
}

/** Why credentials were refused: logged and audited, never shown to the client beyond a generic 401. */
export type AuthFailureReason = 'missing_credentials' | 'malformed_credentials' | 'unknown_key' | 'revoked_key' | 'invalid_token' | 'unknown_tenant';

export type AuthOutcome = { ok: true; principal: Principal } | { ok: false; reason: AuthFailureReason };

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
