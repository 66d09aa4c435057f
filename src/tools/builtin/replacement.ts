import { ToolErrorType, type ErrorCode } from '../../errors.js';

export interface ReplacementRequest {
  /** The file's current text; null when it does not exist. */
  currentText: string | null;
  oldString: string;
  newString: string;
  allowMultiple: boolean;
}

export type ReplacementOutcome = { ok: true; newText: string; occurrences: number; created: boolean } | { ok: false; type: ErrorCode; message: string };

/**
 * The exact-match edit `replace` makes, as a pure function. Rules (Gemini
 * CLI's): `old_string` must occur exactly once unless `allowMultiple`; an
 * empty `old_string` creates a file that does not exist yet; identical
 * strings are no change. In a file that uses CRLF throughout, strings
 * written with LF match too and the file keeps its CRLF line endings.
 */
export function applyReplacement(request: ReplacementRequest): ReplacementOutcome {
  const { currentText, allowMultiple } = request;
  if (request.oldString === request.newString) {
    return { ok: false, type: ToolErrorType.EDIT_NO_CHANGE, message: 'No changes to apply: old_string and new_string are identical.' };
  }
  if (currentText === null) {
    if (request.oldString !== '') {
      return {
        ok: false,
        type: ToolErrorType.FILE_NOT_FOUND,
        message: 'File not found. To create a new file, use an empty old_string (or the write_file tool).',
      };
    }
    return { ok: true, newText: request.newString, occurrences: 0, created: true };
  }
  if (request.oldString === '' && currentText === '') {
    // An existing but empty file: an empty old_string fills it (needed after a user edit).
    return { ok: true, newText: request.newString, occurrences: 1, created: false };
  }
  if (request.oldString === '') {
    return {
      ok: false,
      type: ToolErrorType.ATTEMPT_TO_CREATE_EXISTING_FILE,
      message: 'The file already exists, so old_string must not be empty. Give the exact text to replace.',
    };
  }
  const crlf = usesCrlfThroughout(currentText);
  const text = crlf ? currentText.replaceAll('\r\n', '\n') : currentText;
  const oldString = crlf ? request.oldString.replaceAll('\r\n', '\n') : request.oldString;
  const newString = crlf ? request.newString.replaceAll('\r\n', '\n') : request.newString;
  const occurrences = countOccurrences(text, oldString);
  if (occurrences === 0) {
    return {
      ok: false,
      type: ToolErrorType.EDIT_NO_OCCURRENCE_FOUND,
      message: 'Failed to edit: 0 occurrences of old_string were found. Use read_file to check the exact text, including whitespace and indentation.',
    };
  }
  if (occurrences > 1 && !allowMultiple) {
    return {
      ok: false,
      type: ToolErrorType.EDIT_EXPECTED_OCCURRENCE_MISMATCH,
      message: `Failed to edit: expected 1 occurrence of old_string but found ${occurrences}. Add surrounding context to make it unique, or set allow_multiple to true to replace all ${occurrences}.`,
    };
  }
  // split/join: literal replacement, no `$&`-style patterns from String.replace.
  const replaced = text.split(oldString).join(newString);
  if (replaced === text) {
    return { ok: false, type: ToolErrorType.EDIT_NO_CHANGE, message: 'No changes to apply: the new content is identical to the current content.' };
  }
  return { ok: true, newText: crlf ? replaced.replaceAll('\n', '\r\n') : replaced, occurrences, created: false };
}

/** Non-overlapping occurrences, counted the way split() will replace them. */
function countOccurrences(text: string, search: string): number {
  let count = 0;
  for (let index = text.indexOf(search); index !== -1; index = text.indexOf(search, index + search.length)) count += 1;
  return count;
}

/** True when the text has CRLF line endings and no bare LF. */
function usesCrlfThroughout(text: string): boolean {
  return text.includes('\r\n') && !/(^|[^\r])\n/.test(text);
}
