import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { objectWithMethods, parseOptions } from '../../contracts/parse-options.js';
import type { HostingObserver } from '../operations/hosting-events.js';
import { requestPath, sendJson, sendMethodNotAllowed, type RequestHandler } from '../http/request-handler.js';
import { adminKeyMatcher, adminKeyProblem } from './admin-key.js';

/** One live MCP session as the admin API lists it. */
export interface AdminSessionInfo {
  id: string;
  tenant: string;
  subject: string;
  /** What `subject` names: an API key's id (`api_key`) or an OIDC token's `sub` (`oidc`). */
  via?: 'api_key' | 'oidc';
  ageMs: number;
  calls: number;
  /** The container's memory use, when the engine reported it. */
  memoryBytes?: number;
  /** The OCI runtime of the session's container (`runc`, `runsc`). */
  runtime?: string;
}

/** What the server gives the admin API: its live sessions. */
export interface AdminSessions {
  /** The live sessions (of one tenant, when given); may ask the engine for their memory first. */
  list(tenant?: string): AdminSessionInfo[] | Promise<AdminSessionInfo[]>;
  /** Closes the session; false when there is none with this id. */
  close(id: string): Promise<boolean>;
}

/** Every admin path starts with this; mount the handler on it. */
export const ADMIN_PATH_PREFIX = '/admin/';

const AdminHandlerOptionsSchema = z
  .strictObject({
    adminKey: z.string().check((ctx) => {
      const problem = adminKeyProblem(ctx.value);
      if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    }),
    sessions: objectWithMethods<AdminSessions>('list', 'close'),
    observer: objectWithMethods<HostingObserver>('record'),
    /** True for a tenant's API key; an admin key that is one is refused at start. */
    isTenantKey: z.custom<(key: string) => boolean>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
  })
  .refine((options) => options.isTenantKey?.(options.adminKey) !== true, {
    path: ['adminKey'],
    error: 'must not be a tenant key: the admin key must be its own',
  });

export type AdminHandlerOptions = z.input<typeof AdminHandlerOptionsSchema>;

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The admin API, for `toolcell hosting sessions|close`:
 * - `GET /admin/sessions[?tenant=T]`: the live sessions, with age, calls and memory;
 * - `POST /admin/sessions/<id>/close`: closes one (404 when there is none).
 *
 * Only the admin key opens it (`Authorization: Bearer <key>`, checked in
 * constant time); a tenant key gets the same 401 as any wrong key. Every
 * action, and every refused attempt, is recorded before the answer is sent.
 */
export function createAdminHandler(options: AdminHandlerOptions): RequestHandler {
  const parsed = parseOptions(AdminHandlerOptionsSchema, options, 'createAdminHandler');
  const matches = adminKeyMatcher(parsed.adminKey);
  const { sessions, observer } = parsed;

  return async (req, res) => {
    const presented = bearer(req);
    if (presented === undefined || !matches(presented)) {
      await observer.record({
        event: 'auth_failure',
        remoteAddress: req.socket.remoteAddress ?? '',
        reason: presented === undefined ? 'admin_missing_key' : 'admin_wrong_key',
      });
      return sendJson(res, 401, { error: 'unauthorized' }, { 'WWW-Authenticate': 'Bearer realm="toolcell-admin"' });
    }
    const path = requestPath(req);
    if (path === '/admin/sessions') {
      if (req.method !== 'GET') return sendMethodNotAllowed(res, ['GET']);
      const tenant = new URL(req.url ?? '/', 'http://localhost').searchParams.get('tenant') ?? undefined;
      const list = await sessions.list(tenant);
      await observer.record({ event: 'admin', action: 'list_sessions', ...(tenant !== undefined ? { tenant } : {}) });
      return sendJson(res, 200, { sessions: list });
    }
    const close = /^\/admin\/sessions\/([^/]+)\/close$/.exec(path);
    if (close) {
      if (req.method !== 'POST') return sendMethodNotAllowed(res, ['POST']);
      const id = decodePathPart(close[1]!);
      if (!SESSION_ID.test(id)) return sendJson(res, 400, { error: 'invalid_input', message: 'not a session id' });
      const tenant = (await sessions.list()).find((session) => session.id === id)?.tenant;
      const closed = await sessions.close(id);
      await observer.record({
        event: 'admin',
        action: closed ? 'close_session' : 'close_session_not_found',
        target: id,
        ...(tenant !== undefined ? { tenant } : {}),
      });
      return closed ? sendJson(res, 200, { closed: true, id }) : sendJson(res, 404, { closed: false, id, error: 'session_not_found' });
    }
    return sendJson(res, 404, { error: 'not_found' });
  };
}

function bearer(req: IncomingMessage): string | undefined {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}

/** A path segment decoded; a malformed escape becomes '' (refused as not a session id). */
function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return '';
  }
}
