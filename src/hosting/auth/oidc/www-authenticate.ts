import type { AuthFailureReason } from '../principal.js';

export interface WwwAuthenticateOptions {
  /** The protected-resource metadata URL (`protectedResourceMetadata(...).url`); MCP clients start OAuth from it. */
  resourceMetadata?: string;
  /** Why the request was refused; without it (or for missing credentials) no error code is sent, as RFC 6750 3.1 asks. */
  reason?: AuthFailureReason;
  /** Scopes the client should ask for. */
  scope?: string[];
}

/**
 * The `WWW-Authenticate` value of a 401, as the MCP authorization spec and
 * RFC 6750 describe it: `Bearer resource_metadata="…", error="invalid_token"`.
 * The reason is never spelled out beyond `invalid_token`: a client learns
 * its token did not do, not which check it failed.
 */
export function wwwAuthenticate(options: WwwAuthenticateOptions = {}): string {
  const params: string[] = [];
  if (options.resourceMetadata) params.push(`resource_metadata=${quoted(options.resourceMetadata)}`);
  if (options.reason && options.reason !== 'missing_credentials') params.push('error="invalid_token"');
  if (options.scope && options.scope.length > 0) params.push(`scope=${quoted(options.scope.join(' '))}`);
  return params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
}

/** An RFC 9110 quoted-string: backslash and double quote escaped. */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
