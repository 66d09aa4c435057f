import { readFileSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_KILL_GRACE_MS } from '../../contracts/defaults.js';

/** One live process, from /proc/<pid>/stat. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** One-letter state: R, S, D, T, Z… */
  state: string;
}

/**
 * What belongs to one command. A process belongs when it is the root, is in
 * the root's session or process group, descends from a member, or carries
 * `envMarker` (a `NAME=value` entry no one else has) in its environment.
 * The marker catches what `setsid` plus a double fork moved out of both the
 * session and the tree; only a process that also scrubs its environment
 * escapes, which is why untrusted commands belong in the Docker sandbox.
 */
export interface ProcessTreeSelector {
  rootPid?: number;
  envMarker?: string;
}

/** Every process on the host except zombies, the caller and init. Linux only. */
export function listProcesses(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return entries;
  }
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const entry = readStat(Number(name));
    if (!entry || entry.state === 'Z' || entry.state === 'X' || entry.pid === process.pid || entry.pid === 1) continue;
    entries.push(entry);
  }
  return entries;
}

function readStat(pid: number): ProcessEntry | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: parse after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, state: fields[0] ?? '?', ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]) };
}

function hasEnvEntry(pid: number, entry: Buffer): boolean {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`);
    let at = environ.indexOf(entry);
    while (at >= 0) {
      if ((at === 0 || environ[at - 1] === 0) && (at + entry.length === environ.length || environ[at + entry.length] === 0)) return true;
      at = environ.indexOf(entry, at + 1);
    }
    return false;
  } catch {
    return false;
  }
}

/** The PIDs of every live process that belongs to the selection. */
export function findProcessTree(selector: ProcessTreeSelector): number[] {
  const processes = listProcesses();
  const marker = selector.envMarker === undefined ? undefined : Buffer.from(selector.envMarker);
  const members = new Set<number>();
  for (const p of processes) {
    const root = selector.rootPid;
    if (root !== undefined && (p.pid === root || p.sid === root || p.pgid === root)) members.add(p.pid);
    else if (marker && hasEnvEntry(p.pid, marker)) members.add(p.pid);
  }
  // Descendants of members, to a fixed point (children may be listed before parents).
  let grew = members.size > 0;
  while (grew) {
    grew = false;
    for (const p of processes) {
      if (!members.has(p.pid) && members.has(p.ppid)) {
        members.add(p.pid);
        grew = true;
      }
    }
  }
  return [...members];
}

function signalAll(pids: Iterable<number>, signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already (ESRCH), which is the goal.
    }
  }
}

/**
 * Ends every process of the selection: SIGTERM, a grace period during which
 * new members are sent SIGTERM too, then rounds of SIGSTOP + SIGKILL until
 * a scan finds nothing (stopping first keeps a fork loop from outrunning the
 * kill). Resolves when nothing of it is left, or after `maxRounds`.
 */
export async function killProcessTree(selector: ProcessTreeSelector, options: { graceMs?: number; maxRounds?: number } = {}): Promise<void> {
  const graceMs = options.graceMs ?? DEFAULT_KILL_GRACE_MS;
  const maxRounds = options.maxRounds ?? 100;
  let members = findProcessTree(selector);
  if (members.length === 0) return;
  const termed = new Set(members);
  signalAll(members, 'SIGTERM');
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    await sleep(Math.min(20, Math.max(1, deadline - performance.now())));
    members = findProcessTree(selector);
    if (members.length === 0) return;
    const fresh = members.filter((pid) => !termed.has(pid));
    for (const pid of fresh) termed.add(pid);
    signalAll(fresh, 'SIGTERM');
  }
  for (let round = 0; round < maxRounds; round++) {
    members = findProcessTree(selector);
    if (members.length === 0) return;
    signalAll(members, 'SIGSTOP');
    signalAll(members, 'SIGKILL');
    await sleep(round < 10 ? 2 : 10);
  }
}
