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
}
