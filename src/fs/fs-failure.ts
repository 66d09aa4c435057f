import { ToolErrorType, errorMessage, isToolcellError, type ErrorCode } from '../errors.js';

/** A file operation's failure as a tool error: a stable type and a message for the model. */
export interface FsFailure {
  type: ErrorCode;
  message: string;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(Object.values(ToolErrorType));

const ERRNO_TYPES: Readonly<Record<string, ToolErrorType>> = {
  ENOENT: ToolErrorType.FILE_NOT_FOUND,
  EACCES: ToolErrorType.PERMISSION_DENIED,
  EPERM: ToolErrorType.PERMISSION_DENIED,
  EISDIR: ToolErrorType.PATH_IS_DIRECTORY,
  ENOTDIR: ToolErrorType.PATH_IS_NOT_A_DIRECTORY,
  ELOOP: ToolErrorType.PATH_NOT_IN_WORKSPACE,
  EFBIG: ToolErrorType.FILE_TOO_LARGE,
};

/**
 * Classifies anything a file operation threw: ToolcellErrors keep their
 * code, aborts become `cancelled`, errno codes map to the matching type, and
 * the rest become `fallback`.
 */
export function classifyFsFailure(error: unknown, fallback: ToolErrorType): FsFailure {
  if (isToolcellError(error) && KNOWN_TYPES.has(error.code)) {
    return { type: error.code, message: error.message };
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return { type: ToolErrorType.CANCELLED, message: 'The operation was cancelled.' };
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const mapped = code === undefined ? undefined : ERRNO_TYPES[code];
  return { type: mapped ?? fallback, message: errorMessage(error) };
}
