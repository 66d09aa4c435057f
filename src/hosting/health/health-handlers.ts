import { errorMessage } from '../../errors.js';
import { sendJson, sendMethodNotAllowed, type RequestHandler } from '../http/request-handler.js';

/** What a readiness check found: ready only when every named check is ok. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

/** A readiness check; it must not throw, but a throw is taken as not ready. */
export type ReadinessCheck = () => Promise<Readiness>;

/** One check made of several, run side by side: ready when every one is, with every one's checks. */
export function allReady(...checks: ReadinessCheck[]): ReadinessCheck {
  return async () => {
    const results = await Promise.all(checks.map((check) => check().catch((error: unknown) => failed(error))));
    return { ready: results.every((result) => result.ready), checks: Object.assign({}, ...results.map((result) => result.checks)) as Readiness['checks'] };
  };
}

/** `GET /healthz`: 200 while the process can answer at all. Says nothing else. */
export const healthzHandler: RequestHandler = (req, res) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendMethodNotAllowed(res, ['GET', 'HEAD']);
  sendJson(res, 200, { status: 'ok' });
};

export interface ReadyzOptions {
  check: ReadinessCheck;
  /**
   * Include each check's detail (engine version, image tag, the reason it
   * failed) in the body. For the operator's listener; on the port tenants
   * reach, leave it off and the body is only `{"ready": …}`.
   */
  detail?: boolean;
  /**
   * A result is reused this long, and concurrent requests share one check, so
   * polling /readyz cannot make the server flood the engine. Default 2000 ms.
   */
  cacheMs?: number;
  /**
   * True from the moment the server begins to stop (SIGTERM, then the
   * drain): not ready from then on, whatever the check said last, so a load
   * balancer stops sending it new work. Asked on every request, never cached.
   */
  stopping?: () => boolean;
}

/** `GET /readyz`: 200 when the check says ready, 503 otherwise. */
export function createReadyzHandler(options: ReadyzOptions): RequestHandler {
  const cacheMs = options.cacheMs ?? 2000;
  let last: { at: number; result: Promise<Readiness> } | undefined;
  const current = (): Promise<Readiness> => {
    const now = Date.now();
    if (!last || now - last.at >= cacheMs) last = { at: now, result: options.check().catch((error: unknown) => failed(error)) };
    return last.result;
  };
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendMethodNotAllowed(res, ['GET', 'HEAD']);
    if (options.stopping?.()) return sendJson(res, 503, options.detail ? STOPPING : { ready: false });
    const result = await current();
    sendJson(res, result.ready ? 200 : 503, options.detail ? result : { ready: result.ready });
  };
}

const STOPPING: Readiness = {
  ready: false,
  checks: { serving: { ok: false, detail: 'the server is stopping: running calls drain, new work goes elsewhere' } },
};

function failed(error: unknown): Readiness {
  return { ready: false, checks: { check: { ok: false, detail: errorMessage(error) } } };
}
