import type { IncomingMessage } from 'node:http';
import type { Admission } from '../../mcp/server/serve-http.js';
import type { HostingObserver } from '../operations/hosting-events.js';
import { refusalLabel, type AuthFailureReason, type Authenticator, type Principal } from './principal.js';

export interface RequestAuthOptions {
  authenticators: readonly Authenticator[];
  /** Whether the principal's tenant exists now (the tenants file may have changed since its token was issued). */
  tenantExists: (tenant: string) => boolean;
  observer?: HostingObserver;
  /** The `WWW-Authenticate` challenge of a 401; default `Bearer realm="toolcell"`. */
  challenge?: string;
}

/**
 * Checks a request's `Authorization: Bearer …` with the first authenticator
 * that recognises it. Every failure is the same 401 with a
 * `WWW-Authenticate` challenge (the reason goes to the observer, never to
 * the client, and never the presented secret).
 */
export function requestAuthenticator(options: RequestAuthOptions): (req: IncomingMessage) => Promise<Admission<Principal>> {
  const challenge = options.challenge ?? 'Bearer realm="toolcell"';
  const refuse = async (req: IncomingMessage, reason: AuthFailureReason, detail?: string): Promise<Admission<Principal>> => {
    // `invalid_token:expired`: the authenticator's detail from its closed set, never the credential.
    const label = refusalLabel({ reason, ...(detail !== undefined ? { detail } : {}) });
    await options.observer?.record({ event: 'auth_failure', remoteAddress: req.socket.remoteAddress ?? 'unknown', reason: label });
    const error = reason === 'missing_credentials' ? '' : ', error="invalid_token"';
    return {
      refusal: {
        status: 401,
        message: reason === 'missing_credentials' ? 'Missing bearer token (Authorization: Bearer <key>)' : 'Invalid bearer token',
        headers: { 'WWW-Authenticate': `${challenge}${error}` },
      },
    };
  };
  return async (req) => {
    const header = req.headers.authorization;
    if (header === undefined) return refuse(req, 'missing_credentials');
    // The scheme name is case-insensitive (RFC 9110, section 11.1); the credential is not.
    const bearer = /^\s*bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    if (bearer === undefined) return refuse(req, 'malformed_credentials');
    const authenticator = options.authenticators.find((candidate) => candidate.recognises(bearer));
    if (!authenticator) return refuse(req, 'malformed_credentials');
    const outcome = await authenticator.authenticate(bearer, req);
    if (!outcome.ok) return refuse(req, outcome.reason, outcome.detail);
    if (!options.tenantExists(outcome.principal.tenant)) return refuse(req, 'unknown_tenant');
    return { caller: outcome.principal };
  };
}
