import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';

/**
 * One long-lived shell that runs mount(8) and umount(8) for this process.
 *
 * Why not `spawn('mount', …)` each time: spawning forks the whole Node
 * process (page tables for hundreds of MB, every thread's state) on the
 * calling thread, which waits for it. Under load that fork took up to 161 ms
 * (bench/hosting, a tenant's fork bomb and session churn among other attacks),
 * and the thread was the shell thread every tenant's calls share: three
 * mounts per container start held everybody's calls. The shell is forked
 * once; it forks a process of a few MB per request, in its own process, and
 * the caller only writes a line and waits for one.
 *
 * Requests are one line each (`<id> <op> <path>…`); paths are toolcell's own
 * (checked here: no spaces or control characters). A folder descriptor of
 * this process is named as /proc/<pid>/fd/<n>: the helper is this process's
 * child with the same credentials, so the kernel lets it follow the link,
 * and the mount takes the descriptor's folder, not a path.
 */
export class MountHelper {
  #child: ChildProcessByStdio<Writable, Readable, null> | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();

  /** Binds the folder open as `fd` in this process at `target` (an existing empty folder). */
  bindDescriptor(fd: number, target: string): Promise<void> {
    if (!Number.isInteger(fd) || fd < 0) return Promise.reject(new Error(`mount helper: ${fd} is not an open descriptor`));
    return this.#request('bind', `/proc/${process.pid}/fd/${fd}`, target);
  }

  /** Detaches `target` lazily (the containers that mounted it keep their own mount). */
  detach(target: string): Promise<void> {
    return this.#request('detach', target);
  }

  /** Ends the helper (it also ends on its own when this process's end of its stdin closes). */
  close(): void {
    this.#child?.stdin.end();
    this.#child = undefined;
  }

  #request(op: string, ...paths: string[]): Promise<void> {
    for (const path of paths) if (!SAFE_PATH.test(path)) return Promise.reject(new Error(`mount helper: refusing the path ${JSON.stringify(path)}`));
    const child = this.#start();
    const id = this.#nextId++;
    return new Promise<void>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Referenced only while an answer is awaited: an idle helper never keeps the process alive.
      if (this.#pending.size === 1) {
        child.ref();
        (child.stdout as Socket).ref();
      }
      child.stdin.write(`${id} ${op} ${paths.join(' ')}\n`);
    });
  }

  #start(): ChildProcessByStdio<Writable, Readable, null> {
    if (this.#child !== undefined) return this.#child;
    const child = spawn('sh', ['-c', HELPER_SCRIPT], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.#child = child;
    child.unref();
    (child.stdout as Socket).unref();
    (child.stdin as Socket).unref();
    child.stdin.on('error', () => undefined); // a dead helper: its exit fails what waits
    createInterface({ input: child.stdout }).on('line', (line) => this.#answer(line));
    const fail = (reason: string): void => {
      if (this.#child === child) this.#child = undefined;
      const waiting = [...this.#pending.values()];
      this.#pending.clear();
      for (const { reject } of waiting) reject(new Error(`mount helper: ${reason}`));
    };
    child.on('error', (error) => fail(error.message));
    child.on('exit', (code, signal) => fail(`exited (${signal ?? code}) before answering`));
    return child;
  }

  #answer(line: string): void {
    const match = /^(\d+) (\d+) ?(.*)$/.exec(line);
    if (match === null) return;
    const waiter = this.#pending.get(Number(match[1]));
    if (waiter === undefined) return;
    this.#pending.delete(Number(match[1]));
    if (this.#pending.size === 0 && this.#child !== undefined) {
      this.#child.unref();
      (this.#child.stdout as Socket).unref();
    }
    if (match[2] === '0') waiter.resolve();
    else waiter.reject(new Error(match[3]!.trim() || `exit ${match[2]}`));
  }
}

let shared: MountHelper | undefined;

/** This thread's helper, started on its first request. */
export function sharedMountHelper(): MountHelper {
  shared ??= new MountHelper();
  return shared;
}

/** The paths a request may carry: absolute, no whitespace, quotes or control characters. */
const SAFE_PATH = /^\/[\w./@:+-]+$/;

/**
 * One request at a time (a bind mount takes a few ms; a subshell per request
 * would leave zombies in a shell that never waits for them); an answer is one
 * short line, under PIPE_BUF.
 */
const HELPER_SCRIPT = `
answer() {
  if [ -z "$3" ]; then printf '%s %s\\n' "$1" "$2"
  else printf '%s %s %s\\n' "$1" "$2" "$(printf '%s' "$3" | tr '\\n' ' ' | cut -c1-300)"; fi
}
while read -r id op a b; do
  case "$op" in
    bind) out=$(mount --no-canonicalize --bind "$a" "$b" 2>&1); answer "$id" $? "$out" ;;
    detach) out=$(umount --lazy --no-canonicalize "$a" 2>&1); answer "$id" $? "$out" ;;
    *) answer "$id" 2 "unknown request" ;;
  esac
done
`;
