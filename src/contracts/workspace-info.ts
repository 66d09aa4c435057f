/** The workspace a tool works in: what every file operation is confined to. */
export interface WorkspaceInfo {
  /** Absolute, real paths. The first is the primary root; relative paths resolve against it. */
  roots: string[];
  /** `<primary root>/.toolcell`: memory file, saved full outputs. */
  stateDir: string;
}
