import type { IncomingMessage } from 'node:http';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../contracts/parse-options.js';
import { errorMessage } from '../../errors.js';
import type { AuthFailureReason, Authenticator, Principal } from '../principal.js';
import { discoverJwksUri } from './discovery.js';

/** Asymmetric algorithms only: a symmetric one would let anyone holding the public JWKS sign. */
export const DEFAULT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

const OidcOptionsSchema = z.strictObject({
  /** The issuer URL exactly as tokens name it in `iss` (`--oidc-issuer`). */
  issuer: z.url(),
  /** What `aud` must hold: this server's resource identifier (`--audience`). */
  audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  /** The claim that names the tenant (`--tenant-claim`); default `sub`. A top-level string claim. */
  tenantClaim: z.string().min(1).default('sub'),
  /** Whether the server has this tenant; a token naming any other is refused (`unknown_tenant`). */
  knownTenant: z.custom<(name: string) => boolean>((value) => typeof value === 'function', { error: 'must be a function' }),
  /** Slack for `exp` and `nbf` between the issuer's clock and ours. */
  clockToleranceSeconds: integerOption(0, 30, 300),
  algorithms: z.array(z.string().min(1)).min(1).default(DEFAULT_ALGORITHMS),
  /** Discovery and JWKS requests give up after this. */
  timeoutMs: integerOption(100, 5000, 60_000),
});

export type OidcAuthenticatorOptions = z.input<typeof OidcOptionsSchema>;

/**
 * Why a token was refused, more precisely than the AuthFailureReason: for
 * the audit log and the operator (`invalid_token:expired`), never for the
 * client, which gets a generic 401.
 */
export type OidcFailureDetail =
  | 'malformed'
  | 'bad_signature'
  | 'unknown_signing_key'
  | 'algorithm_not_allowed'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'missing_claim'
  | 'issuer_unreachable'
  | 'unknown_tenant';

/** An AuthOutcome whose refusals also carry the detail. */
export type OidcAuthOutcome = { ok: true; principal: Principal } | { ok: false; reason: AuthFailureReason; detail: OidcFailureDetail };

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * An OAuth 2.1 resource server's token check, as the MCP authorization spec
 * asks: a JWT access token is verified against the issuer's JWKS (found
 * through `<issuer>/.well-known/openid-configuration`), its `iss`, `aud`,
 * `exp` and `nbf` checked with a small clock tolerance, and a claim mapped to
 * a tenant the server knows. The subject is `sub`, so a refreshed token of
 * the same user maps to the same Principal and keeps its sessions.
 *
 * Discovery happens on the first token and is retried after a failure; the
 * key set is refetched by jose when a token names a key it does not have
 * (the issuer rotated its keys).
 */
export class OidcAuthenticator implements Authenticator {
  readonly #options: z.output<typeof OidcOptionsSchema>;
  #keys: Promise<KeySet> | undefined;

  constructor(options: OidcAuthenticatorOptions) {
    this.#options = parseOptions(OidcOptionsSchema, options, 'OidcAuthenticator');
  }

  /** A JWS in compact form: three base64url parts, the first a JSON header (`eyJ`). */
  recognises(bearer: string): boolean {
    return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(bearer);
  }

  async authenticate(bearer: string, _request?: IncomingMessage): Promise<OidcAuthOutcome> {
    if (!this.recognises(bearer)) return refuse('malformed_credentials', 'malformed');
    let keys: KeySet;
    try {
      keys = await this.#keySet();
    } catch {
      return refuse('invalid_token', 'issuer_unreachable');
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(bearer, keys, {
        issuer: this.#options.issuer,
        audience: this.#options.audience,
        algorithms: this.#options.algorithms,
        clockTolerance: this.#options.clockToleranceSeconds,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      return refuse('invalid_token', detailOf(error));
    }
    const tenant = payload[this.#options.tenantClaim];
    if (typeof tenant !== 'string' || tenant === '' || typeof payload.sub !== 'string') return refuse('invalid_token', 'missing_claim');
    if (!this.#options.knownTenant(tenant)) return refuse('unknown_tenant', 'unknown_tenant');
    return { ok: true, principal: { tenant, subject: payload.sub, via: 'oidc' } };
  }

  /** Fetches the discovery document now (at start-up, to fail early); throws `oidc_discovery_failed`. */
  async discover(): Promise<void> {
    await this.#keySet();
  }

  #keySet(): Promise<KeySet> {
    if (!this.#keys) {
      const { issuer, timeoutMs } = this.#options;
      this.#keys = discoverJwksUri(issuer, timeoutMs).then((uri) => createRemoteJWKSet(uri, { timeoutDuration: timeoutMs, cooldownDuration: 30_000 }));
      // A failed discovery is tried again on the next token rather than remembered.
      this.#keys.catch(() => (this.#keys = undefined));
    }
    return this.#keys;
  }
}

function refuse(reason: AuthFailureReason, detail: OidcFailureDetail): OidcAuthOutcome {
  return { ok: false, reason, detail };
}

/** jose's error, as one of the stable details. */
function detailOf(error: unknown): OidcFailureDetail {
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'wrong_issuer';
    if (error.claim === 'aud') return 'wrong_audience';
    if (error.claim === 'nbf') return 'not_yet_valid';
    return 'missing_claim';
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (error instanceof joseErrors.JOSEAlgNotAllowed || error instanceof joseErrors.JOSENotSupported) return 'algorithm_not_allowed';
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) return 'unknown_signing_key';
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return 'issuer_unreachable';
  if (/fetch|ECONNREFUSED|network/i.test(errorMessage(error))) return 'issuer_unreachable';
  return 'malformed';
}

/** The outcome as the audit log's `reason`: `invalid_token:expired`. */
export function auditReason(outcome: Extract<OidcAuthOutcome, { ok: false }>): string {
  return outcome.reason === outcome.detail ? outcome.reason : `${outcome.reason}:${outcome.detail}`;
}
