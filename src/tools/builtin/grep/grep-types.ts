import type { ResolvedWorkspacePath } from '../../../fs/workspace-paths.js';
import type { WorkspaceInfo } from '../../define-tool.js';

/** One matching line. */
export interface GrepMatch {
  /** Relative to the searched directory, `/`-separated; lossy when `fileNameValid` is false. */
  file: string;
  /** False when the file's name is not valid UTF-8: shown lossily, it cannot be used to open the file. */
  fileNameValid?: boolean;
  /** 1-based. */
  line: number;
  text: string;
}

export interface GrepRequest {
  workspace: WorkspaceInfo;
  directory: ResolvedWorkspacePath;
  /** The pattern as the model wrote it (compiled by grep/line-regex.ts, matched case-insensitively). */
  pattern: string;
  /** Glob limiting the files searched; without a `/` it matches file names at any depth. */
  include?: string | undefined;
  /** Stop after this many matches. */
  maxMatches: number;
  signal: AbortSignal;
}

export interface GrepOutcome {
  matches: GrepMatch[];
  /** True when the search stopped at `maxMatches`. */
  truncated: boolean;
}

/** An engine runs a search, or returns null when it cannot (not installed, not a repo, regex dialect). */
export type GrepEngine = (request: GrepRequest) => Promise<GrepOutcome | null>;

export type GrepEngineName = 'javascript';

/** Files larger than this are not searched (all engines). */
export const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;
