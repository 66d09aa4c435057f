import type { Part, PartListUnion } from '@google/genai';
import type { LiveOutput, ToolResult, ToolResultDisplay } from '../tools/tool.js';

/** Removes secrets from one text (SecretRedactor.redact, or any function of that shape). */
export type Redact = (text: string) => string;

function redactPart(part: string | Part, redact: Redact): string | Part {
  if (typeof part === 'string') return redact(part);
  if (typeof part.text === 'string') return { ...part, text: redact(part.text) };
  if (part.functionResponse?.response) {
    let response: Record<string, unknown>;
    try {
      response = JSON.parse(redact(JSON.stringify(part.functionResponse.response))) as Record<string, unknown>;
    } catch {
      // A replacement that cut through an escape: nothing of it is kept rather than risk the value.
      response = { output: '[REDACTED]' };
    }
    return { ...part, functionResponse: { ...part.functionResponse, response } };
  }
  return part;
}

function redactContent(content: PartListUnion, redact: Redact): PartListUnion {
  if (Array.isArray(content)) return content.map((part) => redactPart(part, redact));
  return redactPart(content, redact);
}

function redactDisplay(display: ToolResultDisplay, redact: Redact): ToolResultDisplay {
  if (typeof display === 'string') return redact(display);
  return {
    ...display,
    fileDiff: redact(display.fileDiff),
    originalContent: display.originalContent === null ? null : redact(display.originalContent),
    newContent: redact(display.newContent),
  };
}

/**
 * A tool's result without the session's secrets: what goes to the model,
 * to people, into the error message and a saved full output. Applied to
 * every tool, not only the shell: a command can write a secret to a file
 * that read_file or grep_search then reads back.
 */
export function redactToolResult(result: ToolResult, redact: Redact): ToolResult {
  return {
    ...result,
    llmContent: redactContent(result.llmContent, redact),
    returnDisplay: redactDisplay(result.returnDisplay, redact),
    ...(result.summary !== undefined ? { summary: redact(result.summary) } : {}),
    ...(result.error ? { error: { ...result.error, message: redact(result.error.message) } } : {}),
  };
}

export function redactLiveOutput(output: LiveOutput, redact: Redact): LiveOutput {
  return typeof output === 'string' ? redact(output) : output;
}
