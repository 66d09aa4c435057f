import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Labels on every sandbox container; `toolcell sandbox clean` and start-up cleanup select by them. */
export const LABELS = Object.freeze({
  sandbox: 'dev.toolcell.sandbox',
  ownerPid: 'dev.toolcell.owner-pid',
  /** The owner's start time (clock ticks since boot), so a reused pid is not mistaken for the owner. */
  ownerStart: 'dev.toolcell.owner-start',
  ownerHost: 'dev.toolcell.owner-host',
  backend: 'dev.toolcell.backend',
  workspace: 'dev.toolcell.workspace',
  /** The session that adopted the container; absent on a pre-started spare. */
  session: 'dev.toolcell.session',
});

/** A process's start time from /proc/<pid>/stat, or undefined when it does not exist. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state (field 3); starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

/** Labels naming this process as the owner. */
export function ownerLabels(extra: Record<string, string>): Record<string, string> {
  return {
    [LABELS.sandbox]: '1',
    [LABELS.ownerPid]: String(process.pid),
    [LABELS.ownerStart]: processStartTime(process.pid) ?? '',
    [LABELS.ownerHost]: hostname(),
    ...extra,
  };
}

/**
 * Whether the process that created a container is still running. A container
 * from another host is treated as alive (its owner cannot be checked here).
 */
export function ownerAlive(labels: Record<string, string>): boolean {
  if (labels[LABELS.ownerHost] !== hostname()) return true;
  const pid = Number(labels[LABELS.ownerPid]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const start = processStartTime(pid);
  if (start === undefined) return false;
  const recorded = labels[LABELS.ownerStart];
  return !recorded || recorded === start;
}
