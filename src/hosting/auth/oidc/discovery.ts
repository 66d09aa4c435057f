import { z } from 'zod';
import { ToolcellError, ToolErrorType, errorMessage } from '../../../errors.js';

/** The part of an OpenID Provider's metadata a resource server needs. */
const DiscoverySchema = z.looseObject({ issuer: z.string(), jwks_uri: z.url() });

/** A discovery document or a key set is a few KiB; more is not read. */
const MAX_DOCUMENT_BYTES = 1024 * 1024;

/** `<issuer>/.well-known/openid-configuration`, as OpenID Connect Discovery forms it (no doubled slash). */
export function discoveryUrl(issuer: string): URL {
  return new URL(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
}

/**
 * GETs a JSON document of the issuer: no redirect followed, given up after
 * `timeoutMs`, at most 1 MiB read. Throws an Error saying what went wrong
 * (`HTTP 500`, the network error, `not JSON`).
 */
export async function fetchIssuerJson(url: URL, timeoutMs: number): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error', headers: { Accept: 'application/json' } });
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`HTTP ${response.status}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > MAX_DOCUMENT_BYTES) throw new Error(`more than ${MAX_DOCUMENT_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new Error('not JSON');
  }
}

/**
 * Fetches the issuer's discovery document and returns its `jwks_uri`. The
 * document must name the same issuer (OpenID Connect Discovery 1.0, 4.3):
 * otherwise a document served elsewhere could point at another's keys.
 * Throws `oidc_discovery_failed` saying what went wrong.
 */
export async function discoverJwksUri(issuer: string, timeoutMs: number): Promise<URL> {
  const url = discoveryUrl(issuer);
  let body: unknown;
  try {
    body = await fetchIssuerJson(url, timeoutMs);
  } catch (error) {
    throw new ToolcellError(ToolErrorType.OIDC_DISCOVERY_FAILED, `Cannot read ${url.href}: ${errorMessage(error)}`, { cause: error });
  }
  const parsed = DiscoverySchema.safeParse(body);
  if (!parsed.success) throw new ToolcellError(ToolErrorType.OIDC_DISCOVERY_FAILED, `${url.href} has no valid issuer and jwks_uri`);
  if (parsed.data.issuer !== issuer) {
    throw new ToolcellError(ToolErrorType.OIDC_DISCOVERY_FAILED, `${url.href} names the issuer ${parsed.data.issuer}, not ${issuer}`);
  }
  return new URL(parsed.data.jwks_uri);
}
