import type { IncomingMessage } from 'node:http';
import type { Admission } from '../../mcp/server/serve-http.js';
import { requestPath, sendJson, sendMethodNotAllowed, type RequestHandler } from './request-handler.js';
import type { Principal } from '../auth/principal.js';

/** Where a tenant lists its sessions (GET), and closes one (DELETE `/sessions/<id>`), beside `/mcp`. */
export const TENANT_SESSIONS_PATH = '/sessions';

/** One of the caller's tenant's live sessions, as `GET /sessions` lists it. */
export interface TenantSessionInfo {
  id: string;
  /** Who opened it: the key id, or the token's subject. */
  subject: string;
  ageMs: number;
  /** Time since its last request started or ended (0 while a call runs). */
  inactiveMs: number;
  /** Whether its client holds its event stream open now; a session without one is closed after abandonedSeconds. */
  streamOpen: boolean;
  calls: number;
}

export interface TenantSessionsOptions {
  /** The same check as `/mcp`'s: a 401 with its challenge for anything but a tenant's valid credentials. */
  authenticate: (req: IncomingMessage) => Promise<Admission<Principal>>;
  /** The tenant's live sessions, oldest first. */
  list(tenant: string): TenantSessionInfo[];
  /** Closes `id` if it is a session of `tenant` (its calls cancelled, its container removed); false otherwise. */
  close(tenant: string, id: string): Promise<boolean>;
}

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The tenant's own view of its sessions, with its own credentials, for when
 * a client left without ending its session and the tenant's `sessions`
 * limit refuses the next one:
 * - `GET /sessions`: the tenant's live sessions (every key's and subject's:
 *   the tenant is the unit of trust);
 * - `DELETE /sessions/<id>`: closes one of them. An id that is not the
 *   tenant's, another tenant's included, gets the 404 of an unknown id.
 */
export function createTenantSessionsHandler(options: TenantSessionsOptions): RequestHandler {
  return async (req, res) => {
    // Credentials first: without them, nothing about the path is answered.
    const admission = await options.authenticate(req);
    if ('refusal' in admission) {
      const { status, message, headers, type } = admission.refusal;
      // A 401, or a limit of the tenant's (requestsPerMinute: 429) under its stable code.
      return sendJson(res, status, { error: status === 401 ? 'unauthorized' : (type ?? 'refused'), message }, headers);
    }
    const { tenant } = admission.caller;
    const path = requestPath(req);
    const one = path.startsWith(`${TENANT_SESSIONS_PATH}/`) ? path.slice(TENANT_SESSIONS_PATH.length + 1) : undefined;
    const allowed = one === undefined ? ['GET'] : ['DELETE'];
    if (!allowed.includes(req.method ?? '')) return sendMethodNotAllowed(res, allowed);
    if (one === undefined) return sendJson(res, 200, { sessions: options.list(tenant) });
    const id = decodePathPart(one);
    if (!SESSION_ID.test(id)) return sendJson(res, 400, { error: 'invalid_input', message: 'not a session id' });
    const closed = await options.close(tenant, id);
    return closed ? sendJson(res, 200, { closed: true, id }) : sendJson(res, 404, { error: 'session_not_found', id });
  };
}

/** True for the paths this handler serves. */
export function isTenantSessionsPath(path: string): boolean {
  return path === TENANT_SESSIONS_PATH || (path.startsWith(`${TENANT_SESSIONS_PATH}/`) && !path.slice(TENANT_SESSIONS_PATH.length + 1).includes('/'));
}

/** A path segment decoded; a malformed escape becomes '' (refused as not a session id). */
function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return '';
  }
}
