import { ToolcellError, ToolErrorType, errorMessage } from '../../errors.js';
import type { AdminSessionInfo } from './admin-handler.js';

export interface AdminClientOptions {
  /** The hosting server's admin listener (`--server`, what `serve --admin` binds); a path is ignored. */
  server: string;
  adminKey: string;
  /** Give up after this; default 10 s. */
  timeoutMs?: number;
}

/** `GET /admin/sessions[?tenant=T]`. Throws `admin_request_failed` saying why. */
export async function listAdminSessions(options: AdminClientOptions & { tenant?: string }): Promise<AdminSessionInfo[]> {
  const query = options.tenant !== undefined ? `?tenant=${encodeURIComponent(options.tenant)}` : '';
  const body = (await adminRequest(options, 'GET', `/admin/sessions${query}`)) as { sessions?: AdminSessionInfo[] };
  if (!Array.isArray(body.sessions)) throw new ToolcellError(ToolErrorType.ADMIN_REQUEST_FAILED, `${options.server} answered without a session list`);
  return body.sessions;
}

/** `POST /admin/sessions/<id>/close`. Throws `admin_request_failed` (session not found included). */
export async function closeAdminSession(options: AdminClientOptions & { session: string }): Promise<void> {
  await adminRequest(options, 'POST', `/admin/sessions/${encodeURIComponent(options.session)}/close`);
}

async function adminRequest(options: AdminClientOptions, method: string, path: string): Promise<unknown> {
  let url: URL;
  try {
    url = new URL(path, options.server);
  } catch {
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, `--server ${options.server} is not a URL`);
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { Authorization: `Bearer ${options.adminKey}`, Accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      redirect: 'error',
    });
  } catch (error) {
    throw new ToolcellError(ToolErrorType.ADMIN_REQUEST_FAILED, `Cannot reach ${url.origin}: ${errorMessage(error)}`, { cause: error });
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.ok) return body;
  throw new ToolcellError(ToolErrorType.ADMIN_REQUEST_FAILED, failureMessage(response.status, body, url));
}

function failureMessage(status: number, body: Record<string, unknown>, url: URL): string {
  if (status === 401) return `${url.origin} refused the admin key (HTTP 401): check --admin-key-file`;
  if (status === 404 && body['error'] === 'session_not_found') return `No live session ${String(body['id'])} on ${url.origin}`;
  if (status === 404)
    return `${url.origin} has no admin API at ${url.pathname} (HTTP 404): is it the admin listener of a toolcell hosting server started with --admin and --admin-key-file?`;
  return `${url.origin} answered HTTP ${status}${typeof body['error'] === 'string' ? `: ${body['error']}` : ''}`;
}
