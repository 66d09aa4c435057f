import { GoogleGenAI } from '@google/genai';
import { z } from 'zod';
import { parseOptions } from '../contracts/parse-options.js';
import { ToolcellError, ToolErrorType } from '../errors.js';
import { AgentErrorCode } from './api-errors.js';

export { DEFAULT_MODEL } from './defaults.js';

/** The part of the @google/genai client the turn loop uses (so tests and wrappers can stand in). */
export type ContentGenerator = Pick<GoogleGenAI['models'], 'generateContentStream'>;

const geminiClientOptionsSchema = z.object({
  /** Defaults to GEMINI_API_KEY, then GOOGLE_API_KEY, from `env`. */
  apiKey: z.string().min(1).optional(),
  /**
   * Where the Gemini REST API lives. Defaults to GOOGLE_GEMINI_BASE_URL from
   * `env`, then Google's endpoint. (@google/genai 2 reads that variable from
   * process.env itself; passing it explicitly also honours a custom `env`.)
   */
  baseUrl: z.string().optional(),
  /** Environment to read keys and the base URL from; defaults to process.env. */
  env: z.custom<NodeJS.ProcessEnv>((value) => typeof value === 'object' && value !== null, { error: 'must be an object of variables' }).optional(),
});

export type GeminiClientOptions = z.input<typeof geminiClientOptionsSchema>;

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
export function createGeminiClient(raw: GeminiClientOptions = {}): GoogleGenAI {
  const options = parseOptions(geminiClientOptionsSchema, raw, 'createGeminiClient');
  const env = options.env ?? process.env;
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
