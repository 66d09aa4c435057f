import type { FunctionCall, GenerateContentResponse, Part } from '@google/genai';
import { WarningCode } from '../errors.js';
import { AgentErrorCode } from './api-errors.js';
import type { AgentError, TokenUsage } from './events.js';
import { emptyUsage } from './events.js';

/** What one streamed model response amounted to. */
export interface ModelTurnResult {
  /** The model's parts as they should be recorded in history (thoughts left out, adjacent plain text merged). */
  parts: Part[];
  /** Every FunctionCall of the response, in the order they arrived. */
  functionCalls: FunctionCall[];
  finishReason?: string;
  usage: TokenUsage;
  /** Chunks received, to tell a broken answer from one that never started. */
  chunks: number;
  /** Set when the answer must not be used (blocked, malformed call, or no finish reason). */
  error?: AgentError;
  /** Set for an answer that is usable but cut short (MAX_TOKENS). */
  warning?: { code: WarningCode; message: string };
}

export type ModelTurnEvent = { type: 'text'; text: string } | { type: 'thought'; text: string };

/** Finish reasons that mean the answer was withheld for its content. */
const BLOCKED_REASONS = new Set([
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/** Finish reasons that mean the model's function calling went wrong. */
const BAD_CALL_REASONS = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']);

/** Counts chunks as they arrive, so a caller can tell a broken answer from one that never started. */
export interface StreamProgress {
  chunks: number;
}

/**
 * Reads one streamed response to its end: yields text as it arrives, collects
 * every FunctionCall (several chunks may each carry some), judges the finish
 * reason, and returns the whole. Stream errors are thrown to the caller.
 */
export async function* readModelTurn(
  stream: AsyncIterable<GenerateContentResponse>,
  progress: StreamProgress = { chunks: 0 },
): AsyncGenerator<ModelTurnEvent, ModelTurnResult> {
  const result: ModelTurnResult = { parts: [], functionCalls: [], usage: emptyUsage(), chunks: 0 };
  let blockReason: string | undefined;
  for await (const chunk of stream) {
    result.chunks = ++progress.chunks;
    if (chunk.promptFeedback?.blockReason) blockReason = chunk.promptFeedback.blockReason;
    if (chunk.usageMetadata) result.usage = usageOf(chunk.usageMetadata);
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) result.functionCalls.push(part.functionCall);
      else if (typeof part.text === 'string' && part.text.length > 0) {
        yield { type: part.thought ? 'thought' : 'text', text: part.text };
      }
      // Thought summaries are shown, not sent back (as gemini-cli); thought signatures on other parts are kept.
      if (!part.thought) recordPart(result.parts, part);
    }
    if (candidate?.finishReason) result.finishReason = candidate.finishReason;
  }
  judge(result, blockReason);
  return result;
}

function judge(result: ModelTurnResult, blockReason: string | undefined): void {
  const reason = result.finishReason;
  if (blockReason) {
    result.error = {
      code: AgentErrorCode.API_PROMPT_BLOCKED,
      message: `The Gemini API blocked the prompt (blockReason ${blockReason}). Rephrase the request.`,
    };
  } else if (reason && BLOCKED_REASONS.has(reason)) {
    result.error = {
      code: AgentErrorCode.API_SAFETY_BLOCKED,
      message: `The model's answer was blocked by the Gemini API (finishReason ${reason}).`,
    };
  } else if (reason && BAD_CALL_REASONS.has(reason)) {
    result.error = {
      code: AgentErrorCode.API_MALFORMED_FUNCTION_CALL,
      message: `The model produced an unusable function call (finishReason ${reason}).`,
    };
  } else if (!reason) {
    result.error = {
      code: AgentErrorCode.API_STREAM_BROKEN,
      message:
        result.chunks === 0
          ? 'The Gemini API returned an empty stream. Try again.'
          : 'The Gemini API stream ended without a finish reason (the answer is incomplete). Try again.',
    };
  } else if (reason === 'MAX_TOKENS') {
    result.warning = { code: WarningCode.MAX_TOKENS, message: 'The model hit its output token limit; the answer may be cut short.' };
  }
}

/** Keeps parts as received (thought signatures must go back verbatim) but merges adjacent plain text. */
function recordPart(parts: Part[], part: Part): void {
  const last = parts[parts.length - 1];
  if (isPlainText(part) && last && isPlainText(last)) {
    parts[parts.length - 1] = { text: `${last.text ?? ''}${part.text ?? ''}` };
    return;
  }
  parts.push(part);
}

function isPlainText(part: Part): boolean {
  return typeof part.text === 'string' && Object.keys(part).every((key) => key === 'text');
}

function usageOf(metadata: NonNullable<GenerateContentResponse['usageMetadata']>): TokenUsage {
  const promptTokens = metadata.promptTokenCount ?? 0;
  const outputTokens = (metadata.candidatesTokenCount ?? 0) + (metadata.thoughtsTokenCount ?? 0);
  return {
    promptTokens,
    outputTokens,
    cachedTokens: metadata.cachedContentTokenCount ?? 0,
    totalTokens: metadata.totalTokenCount ?? promptTokens + outputTokens,
  };
}
