/** Files larger than this are not read by any built-in tool (`file_too_large`). */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;

/** Lines of a text file returned when no range (or an open-ended one) is asked for. */
export const MAX_TEXT_LINES = 2000;

/** Longer lines are cut to this many characters when shown to the model. */
export const MAX_LINE_CHARS = 2000;
