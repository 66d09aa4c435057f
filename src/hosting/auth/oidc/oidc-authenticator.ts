import type { IncomingMessage } from 'node:http';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../../contracts/parse-options.js';
import { refusalLabel, type AuthFailureReason, type Authenticator, type Principal } from '../principal.js';
import { IssuerKeys, IssuerUnreachableError } from './issuer-keys.js';
import { audienceProblem } from './resource-identifiers.js';

/** Asymmetric algorithms only: a symmetric one would let anyone holding the public JWKS sign. */
export const DEFAULT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** An audience: any string, a URI when it holds a colon (RFC 7519 StringOrURI). */
const audience = z.string().check((ctx) => {
  const problem = audienceProblem(ctx.value);
  if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
});

const OidcOptionsSchema = z.strictObject({
  /** The issuer URL exactly as tokens name it in `iss` (`--oidc-issuer`). */
  issuer: z.url(),
  /** What `aud` must hold (`--audience`): a name of this server, `toolcell`, a URN or its resource URL. */
  audience: z.union([audience, z.array(audience).min(1)]),
  /** The claim that names the tenant (`--tenant-claim`); default `sub`. A top-level string claim. */
  tenantClaim: z.string().min(1).default('sub'),
  /** Whether the server has this tenant; a token naming any other is refused (`unknown_tenant`). */
  knownTenant: z.custom<(name: string) => boolean>((value) => typeof value === 'function', { error: 'must be a function' }),
  /** Slack for `exp` and `nbf` between the issuer's clock and ours. */
  clockToleranceSeconds: integerOption(0, 30, 300),
  algorithms: z.array(z.string().min(1)).min(1).default(DEFAULT_ALGORITHMS),
  /** Discovery and JWKS requests give up after this. */
  timeoutMs: integerOption(100, 5000, 60_000),
  /** After a failed discovery or JWKS request, none for this long, doubling while the issuer keeps failing (issuer-keys.ts). */
  retryAfterMs: integerOption(10, 5000, 300_000),
  /** Where an issuer outage is told, once when it starts and once when it ends (the server's stderr). */
  onLog: z.custom<(message: string) => void>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
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

/**
 * An OAuth 2.1 resource server's token check, as the MCP authorization spec
 * asks: a JWT access token is verified against the issuer's JWKS (found
 * through `<issuer>/.well-known/openid-configuration`), its `iss`, `aud`,
 * `exp` and `nbf` checked with a small clock tolerance, and a claim mapped to
 * a tenant the server knows. The subject is `sub` within the issuer, so a
 * refreshed token of the same user maps to the same Principal and keeps its
 * sessions, and no `sub` can pass for an API key's id (`sameIdentity`).
 *
 * The keys are fetched and refetched by IssuerKeys, which bounds how often
 * the issuer is asked whatever the tokens presented (a failure is cached
 * and retried with a backoff) and logs an outage once.
 */
export class OidcAuthenticator implements Authenticator {
  readonly #options: z.output<typeof OidcOptionsSchema>;
  readonly #keys: IssuerKeys;

  constructor(options: OidcAuthenticatorOptions) {
    this.#options = parseOptions(OidcOptionsSchema, options, 'OidcAuthenticator');
    const { issuer, timeoutMs, retryAfterMs, onLog } = this.#options;
    this.#keys = new IssuerKeys({ issuer, timeoutMs, retryAfterMs, ...(onLog ? { onLog } : {}) });
  }

  /** Requests made to the issuer so far (discovery and JWKS). */
  get issuerRequests(): number {
    return this.#keys.requests;
  }

  /** A JWS in compact form: three base64url parts, the first a JSON header (`eyJ`). */
  recognises(bearer: string): boolean {
    return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(bearer);
  }

  async authenticate(bearer: string, _request?: IncomingMessage): Promise<OidcAuthOutcome> {
    if (!this.recognises(bearer)) return refuse('malformed_credentials', 'malformed');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(bearer, this.#keys.getKey, {
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
    return { ok: true, principal: { tenant, subject: payload.sub, via: 'oidc', issuer: this.#options.issuer } };
  }

  /** Fetches the discovery document now (at start-up, to fail early); throws `oidc_discovery_failed`. */
  discover(): Promise<void> {
    return this.#keys.discover();
  }
}

function refuse(reason: AuthFailureReason, detail: OidcFailureDetail): OidcAuthOutcome {
  return { ok: false, reason, detail };
}

/** jose's error, as one of the stable details. */
function detailOf(error: unknown): OidcFailureDetail {
  if (error instanceof IssuerUnreachableError) return 'issuer_unreachable';
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
  return 'malformed';
}

/** The outcome as the audit log's `reason`: `invalid_token:expired`. */
export function auditReason(outcome: Extract<OidcAuthOutcome, { ok: false }>): string {
  return refusalLabel(outcome);
}
