import { ToolcellError, ToolErrorType } from '../errors.js';

/** Gemini's rule for function names. */
export const GEMINI_FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/;
/** MCP's rule for tool names. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** Throws `invalid_tool_name` unless `name` is a valid Gemini function name. */
export function assertGeminiFunctionName(name: string): void {
  if (!GEMINI_FUNCTION_NAME.test(name)) {
    throw new ToolcellError(
      ToolErrorType.INVALID_TOOL_NAME,
      `Tool name ${JSON.stringify(name)} is not a valid Gemini function name: it must match ${GEMINI_FUNCTION_NAME.source} (start with a letter or underscore, at most 64 characters of letters, digits, _ . : -).`,
    );
  }
}

/**
 * Turns any string into a valid Gemini function name: invalid characters
 * become `_`, a leading digit or punctuation gets a `_` prefix, and names over
 * 64 characters keep their head and tail around `___` so that the meaningful
 * end (usually the tool name) stays visible.
 */
export function toGeminiFunctionName(raw: string): string {
  let name = raw.replace(/[^A-Za-z0-9_.:-]/g, '_');
  if (!/^[A-Za-z_]/.test(name)) name = `_${name}`;
  if (name.length > 64) name = `${name.slice(0, 28)}___${name.slice(-33)}`;
  return name;
}

/**
 * Turns a Gemini function name into a valid MCP tool name (`:` is not allowed
 * in MCP names). The mapping is injective on the names toolcell registers
 * because their `:` are rare; callers that need a reverse map keep one.
 */
export function toMcpToolName(geminiName: string): string {
  const name = geminiName.replace(/[^A-Za-z0-9._-]/g, '_');
  return name.slice(0, 128) || '_';
}
