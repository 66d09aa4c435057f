import { ToolErrorType } from '../../errors.js';
import type { HttpRefusal } from '../../mcp/server/http-replies.js';

/**
 * A tenant's limit reached for now: 429 with Retry-After, `quota_exceeded`
 * as the error's type and the limit's name in its data, so a client can
 * tell which limit to wait for.
 */
export function quotaRefusal(limit: string, message: string, retryAfterSeconds: number): HttpRefusal {
  return { status: 429, message, headers: { 'Retry-After': String(retryAfterSeconds) }, type: ToolErrorType.QUOTA_EXCEEDED, data: { limit } };
}
