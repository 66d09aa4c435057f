import { AgentErrorCode, joinSentences } from '../errors.js';
import type { AgentError } from './events.js';

export { AgentErrorCode } from '../errors.js';

/** Network-level failures of undici/fetch (the request never got an HTTP answer). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
]);

/**
 * Turns anything the @google/genai client threw into a one-line AgentError.
 * `receivedChunks` tells a connection lost mid-answer (`api_stream_broken`)
 * from one that never answered (`api_network_error`).
 */
export function classifyApiError(error: unknown, options: { receivedChunks?: number } = {}): AgentError {
  if (isApiError(error)) {
    const status = (error as { status: number }).status;
    const detail = apiErrorDetail((error as Error).message);
    return { code: codeForStatus(status), message: messageForStatus(status, detail) };
  }
  const message = error instanceof Error ? error.message : String(error);
  const causeCode = networkCode(error);
  if ((options.receivedChunks ?? 0) > 0 || /terminated|Incomplete JSON segment|exception parsing stream chunk|other side closed/i.test(message)) {
    return {
      code: AgentErrorCode.API_STREAM_BROKEN,
      message: `The connection to the Gemini API broke off mid-answer (${oneLine(causeCode ?? message)}). Try again.`,
    };
  }
  if (causeCode !== undefined || /fetch failed|network/i.test(message)) {
    return {
      code: AgentErrorCode.API_NETWORK_ERROR,
      message: `Cannot reach the Gemini API (${oneLine(causeCode ?? message)}). Check the network, or GOOGLE_GEMINI_BASE_URL if set.`,
    };
  }
  return { code: AgentErrorCode.API_ERROR, message: `Gemini API request failed: ${oneLine(message)}` };
}

/**
 * The SDK's ApiError, recognised by shape: importing the class would load
 * all of @google/genai into every toolcell command.
 */
function isApiError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ApiError' && typeof (error as { status?: unknown }).status === 'number';
}

function codeForStatus(status: number): AgentErrorCode {
  if (status === 429) return AgentErrorCode.API_QUOTA_EXCEEDED;
  if (status === 401 || status === 403) return AgentErrorCode.API_AUTH_FAILED;
  if (status === 404) return AgentErrorCode.API_MODEL_NOT_FOUND;
  if (status >= 500) return AgentErrorCode.API_SERVER_ERROR;
  return AgentErrorCode.API_BAD_REQUEST;
}

function messageForStatus(status: number, detail: string): string {
  const suffix = detail ? `: ${detail}` : '';
  if (status === 429) return joinSentences(`Gemini API quota exceeded (HTTP 429)${suffix}`, 'Wait and retry, or check your plan and rate limits.');
  if (status === 401 || status === 403) {
    return joinSentences(`Gemini API rejected the API key (HTTP ${status})${suffix}`, 'Check GEMINI_API_KEY or GOOGLE_API_KEY.');
  }
  if (status === 404) return joinSentences(`Gemini API: model or endpoint not found (HTTP 404)${suffix}`, 'Check --model.');
  if (status >= 500) return joinSentences(`Gemini API server error (HTTP ${status})${suffix}`, 'Try again later.');
  return `Gemini API rejected the request (HTTP ${status})${suffix}`;
}

/**
 * The SDK puts the whole error body (JSON) in ApiError.message, sometimes
 * after a `got status: X.` prefix; people want only its `error.message`.
 */
function apiErrorDetail(raw: string): string {
  const start = raw.indexOf('{');
  if (start !== -1) {
    try {
      const body = JSON.parse(raw.slice(start)) as { error?: { message?: unknown } };
      if (typeof body.error?.message === 'string') return oneLine(body.error.message);
    } catch {
      // Not JSON after all: fall through to the raw text.
    }
  }
  return oneLine(raw);
}

function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || code.startsWith('UND_ERR'))) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Collapses whitespace and caps length so a message stays one readable line. */
export function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
