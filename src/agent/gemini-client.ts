import { GoogleGenAI } from '@google/genai';
import { ToolcellError, ToolErrorType } from '../errors.js';
import { AgentErrorCode } from './api-errors.js';

export { DEFAULT_MODEL } from './defaults.js';

/** The part of the @google/genai client the turn loop uses (so tests and wrappers can stand in). */
export type ContentGenerator = Pick<GoogleGenAI['models'], 'generateContentStream'>;

export interface GeminiClientOptions {
  /** Defaults to GEMINI_API_KEY, then GOOGLE_API_KEY, from `env`. */
  apiKey?: string;
  /**
   * Where the Gemini REST API lives. Defaults to GOOGLE_GEMINI_BASE_URL from
   * `env`, then Google's endpoint. (@google/genai 2 reads that variable from
   * process.env itself; passing it explicitly also honours a custom `env`.)
   */
  baseUrl?: string;
  /** Environment to read keys and the base URL from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The API key from the environment, or a `api_key_missing` ToolcellError
 * whose one-line message says what to set.
 */
export function resolveApiKey(env: NodeJS.ProcessEnv = process.env): string {
  const key = env.GEMINI_API_KEY?.trim() || env.GOOGLE_API_KEY?.trim();
  if (!key) {
    throw new ToolcellError(
      AgentErrorCode.API_KEY_MISSING,
      'No Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) to a key from https://aistudio.google.com/apikey.',
    );
  }
  return key;
}

/**
 * A real @google/genai client for the Gemini API (never Vertex AI, whatever
 * GOOGLE_GENAI_USE_VERTEXAI says). Requests are not retried by the SDK: the
 * turn loop reports failures at once, with a stable code.
 */
export function createGeminiClient(options: GeminiClientOptions = {}): GoogleGenAI {
  if (typeof options !== 'object' || options === null) throw new TypeError('createGeminiClient: options must be an object');
  const env = options.env ?? process.env;
  if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || options.apiKey.length === 0)) {
    throw new TypeError('createGeminiClient: options.apiKey must be a non-empty string');
  }
  const apiKey = options.apiKey ?? resolveApiKey(env);
  const baseUrl = options.baseUrl ?? (env.GOOGLE_GEMINI_BASE_URL?.trim() || undefined);
  if (baseUrl !== undefined) assertHttpUrl(baseUrl);
  return new GoogleGenAI({ apiKey, vertexai: false, ...(baseUrl ? { httpOptions: { baseUrl } } : {}) });
}

function assertHttpUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ToolcellError(ToolErrorType.INVALID_BASE_URL, `GOOGLE_GEMINI_BASE_URL / baseUrl is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolcellError(ToolErrorType.INVALID_BASE_URL, `GOOGLE_GEMINI_BASE_URL / baseUrl must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
}
