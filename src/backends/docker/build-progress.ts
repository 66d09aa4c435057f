/**
 * What `buildSandboxImage` reports while it works, as events rather than
 * raw lines, so each front end can choose its form: a live status line on a
 * terminal, plain lines in a log, nothing in a library.
 */

/** The three things a build may do, in this order. */
export type BuildPhase = 'base' | 'pull' | 'image';

export type BuildProgressEvent =
  /** A phase starts: building the offline base (debootstrap), pulling the registry base, building the image. */
  | { type: 'phase'; phase: BuildPhase; message: string }
  /** A Dockerfile step starts (`Step 4/12 : RUN …` in the classic builder's stream). */
  | { type: 'step'; index: number; total: number; instruction: string }
  /** A line the current phase or step printed (apt, debootstrap, pull layers). */
  | { type: 'output'; line: string }
  /** The image is built and tagged. */
  | { type: 'done'; tag: string; sizeBytes: number; durationMs: number };

/** Calls `onEvent` with the events one chunk of builder or script output holds, across chunk boundaries. */
export class BuildOutputSplitter {
  readonly #onEvent: (event: BuildProgressEvent) => void;
  #pending = '';

  constructor(onEvent: (event: BuildProgressEvent) => void) {
    this.#onEvent = onEvent;
  }

  write(text: string): void {
    this.#pending += text;
    const parts = this.#pending.split(/\r?\n/);
    this.#pending = parts.pop() ?? '';
    for (const part of parts) this.#line(part);
  }

  /** Emits what is left without a final newline. */
  end(): void {
    const rest = this.#pending;
    this.#pending = '';
    this.#line(rest);
  }

  #line(line: string): void {
    if (!line.trim()) return;
    const step = /^Step (\d+)\/(\d+) : (.*)$/.exec(line);
    if (step) this.#onEvent({ type: 'step', index: Number(step[1]), total: Number(step[2]), instruction: step[3]! });
    else this.#onEvent({ type: 'output', line });
  }
}

/** A duration: `8.4 s` under a minute, else `m:ss`. */
export function formatDuration(ms: number): string {
  return ms < 60_000 ? `${(Math.max(0, ms) / 1000).toFixed(1)} s` : formatElapsed(ms);
}

/** Whole seconds as `m:ss`, the way a person reads a running clock. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/** Bytes as `312 MB` (decimal units, as `docker images` shows them). */
export function formatImageSize(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${Math.round(bytes / 1e6)} MB`;
  return `${Math.round(bytes / 1e3)} kB`;
}

/** The closing line of a build: what a person checks first. */
export function describeBuilt(event: { tag: string; sizeBytes: number; durationMs: number }): string {
  return `built ${event.tag}, ${formatImageSize(event.sizeBytes)}, in ${formatDuration(event.durationMs)}`;
}

/**
 * debootstrap's own stage, from its `I: …` lines: `Retrieving libc6 2.36`
 * and `Retrieving Packages` are one stage, "Retrieving"; a log wants one
 * line per stage, not one per package.
 */
export function debootstrapStage(line: string): string | undefined {
  const match = /^I: (Retrieving|Validating|Checking|Resolving|Found|Extracting|Installing|Unpacking|Configuring|Base system installed)\b/.exec(line);
  return match?.[1];
}

export interface PlainBuildLogOptions {
  /** Where lines go. */
  write: (line: string) => void;
  /** Also print every output line, not only phases and steps. Default false. */
  verbose?: boolean;
  /** Output lines kept for `tail()` (shown when a build fails). Default 20. */
  keepLines?: number;
  /** Clock, for tests. Default `Date.now`. */
  now?: () => number;
}

/**
 * Renders progress as plain lines, for logs and pipes: one line per phase,
 * per Dockerfile step and per debootstrap stage, each with the time since
 * the build started; the raw output only with `verbose`, but its last lines
 * are kept so a failure can show them.
 */
export class PlainBuildLog {
  readonly #write: (line: string) => void;
  readonly #verbose: boolean;
  readonly #keep: number;
  readonly #now: () => number;
  readonly #started: number;
  readonly #tail: string[] = [];
  #stage: string | undefined;

  constructor(options: PlainBuildLogOptions) {
    this.#write = options.write;
    this.#verbose = options.verbose ?? false;
    this.#keep = options.keepLines ?? 20;
    this.#now = options.now ?? Date.now;
    this.#started = this.#now();
  }

  /** Time since the log was made, `m:ss`. */
  elapsed(): string {
    return formatElapsed(this.#now() - this.#started);
  }

  event(event: BuildProgressEvent): void {
    const at = `[${this.elapsed()}]`;
    if (event.type === 'phase') {
      this.#stage = undefined;
      this.#write(`${at} ${event.message}`);
    } else if (event.type === 'step') {
      this.#tail.length = 0;
      this.#write(`${at} step ${event.index}/${event.total}: ${event.instruction}`);
    } else if (event.type === 'done') {
      this.#write(`${at} ${describeBuilt(event)}`);
    } else {
      this.#tail.push(event.line);
      if (this.#tail.length > this.#keep) this.#tail.shift();
      const stage = debootstrapStage(event.line);
      if (this.#verbose) this.#write(event.line);
      else if (stage !== undefined && stage !== this.#stage) this.#write(`${at} debootstrap: ${stage}`);
      if (stage !== undefined) this.#stage = stage;
    }
  }

  /** The last output lines of the current step or phase. */
  tail(): string[] {
    return [...this.#tail];
  }
}
