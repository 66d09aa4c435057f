import { z } from 'zod';

/**
 * Where every sandbox mounts the primary root, and the shell's working
 * directory there: the file tools accept absolute paths under it as paths
 * in the primary root, locally too.
 */
export const SANDBOX_WORKSPACE_PATH = '/workspace';

/** The workspace a tool works in: what every file operation is confined to. */
export interface WorkspaceInfo {
  /** Absolute, real paths. The first is the primary root; relative paths resolve against it. */
  roots: string[];
  /** `<primary root>/.toolcell`: memory file, saved full outputs. */
  stateDir: string;
  /**
   * Who the files and folders the tools create belong to when toolcell runs
   * as root: the workspace's owner (a hosting tenant's uid), as for what its
   * sandboxed commands create. A file the tools replace keeps its own owner
   * either way. Absent: whoever toolcell runs as.
   */
  owner?: { uid: number; gid: number };
  /**
   * The caller knows the workspace only as the sandbox shows it (a hosting
   * tenant): absolute paths are taken under SANDBOX_WORKSPACE_PATH only, and
   * every path the tools answer with is relative or under it, never the
   * host's. Default false: host paths inside a root are accepted and shown.
   */
  hideHostPaths?: boolean;
}

/** An option holding a WorkspaceInfo: checked for what every user of one needs, its roots. */
export const workspaceInfoOption = z.custom<WorkspaceInfo>(
  (value) => Array.isArray((value as Partial<WorkspaceInfo> | null)?.roots) && (value as WorkspaceInfo).roots.length > 0,
  { error: 'must be a WorkspaceInfo with at least one root' },
);
