import { PlainBuildLog, debootstrapStage, describeBuilt, formatDuration, formatElapsed, type BuildProgressEvent } from '../backends/docker/build-progress.js';
import { createStyle, sanitize, type Style } from './style.js';
import { truncateToWidth } from './text-width.js';

/** A stream the view writes to: a terminal, or anything else. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface BuildProgressViewOptions {
  stream: ProgressStream;
  /** Colours on a terminal. Default false. */
  color?: boolean;
  /** Print every output line (plain mode only; a terminal shows the latest one live). Default false. */
  verbose?: boolean;
  /** Clock, for tests. Default `Date.now`. */
  now?: () => number;
  /** Refresh the live line's elapsed time this often on a terminal. Default 1000 ms; 0 never. */
  tickMs?: number;
}

/**
 * `toolcell sandbox build`'s progress, as a person follows it. On a terminal:
 * each phase and finished Dockerfile step stays as one line with its time,
 * and one live line below shows the running step, its elapsed time and the
 * last line it printed. Elsewhere (CI logs, pipes): plain lines only
 * (PlainBuildLog), no cursor movement.
 */
export class BuildProgressView {
  readonly #stream: ProgressStream;
  readonly #plain: PlainBuildLog | undefined;
  readonly #now: () => number;
  readonly #style: Style;
  readonly #started: number;
  readonly #timer: NodeJS.Timeout | undefined;
  #current: { label: string; since: number; phase: boolean } | undefined;
  #detail = '';
  #liveShown = false;

  constructor(options: BuildProgressViewOptions) {
    this.#stream = options.stream;
    this.#now = options.now ?? Date.now;
    this.#style = createStyle(options.color === true);
    this.#started = this.#now();
    if (options.stream.isTTY !== true) {
      this.#plain = new PlainBuildLog({ write: (line) => this.#stream.write(`${line}\n`), verbose: options.verbose ?? false, now: this.#now });
      return;
    }
    const tickMs = options.tickMs ?? 1000;
    if (tickMs > 0) {
      this.#timer = setInterval(() => this.#drawLive(), tickMs);
      this.#timer.unref();
    }
  }

  event(event: BuildProgressEvent): void {
    if (this.#plain) return this.#plain.event(event);
    if (event.type === 'phase') {
      this.#finishCurrent();
      this.#current = { label: event.message, since: this.#now(), phase: true };
      this.#detail = '';
    } else if (event.type === 'step') {
      // A phase made of steps becomes their heading; one without (the base, a pull) gets a tick and its time.
      if (this.#current?.phase) this.#print(this.#fit(this.#current.label, 0));
      else this.#finishCurrent();
      this.#current = { label: `step ${event.index}/${event.total}: ${event.instruction}`, since: this.#now(), phase: false };
      this.#detail = '';
    } else if (event.type === 'done') {
      this.#finishCurrent();
      this.#print(this.#style.green(`✓ ${describeBuilt(event)}`));
    } else {
      const stage = debootstrapStage(event.line);
      this.#detail = stage !== undefined ? `debootstrap: ${event.line.slice(3)}` : event.line;
    }
    this.#drawLive();
  }

  /** The output lines a failure should show (plain mode keeps them; the terminal showed them live). */
  tail(): string[] {
    return this.#plain?.tail() ?? (this.#detail ? [this.#detail] : []);
  }

  /** Stops the clock and clears the live line. */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#clearLive();
  }

  #finishCurrent(): void {
    if (!this.#current) return;
    const took = formatDuration(this.#now() - this.#current.since);
    this.#print(`${this.#style.green('✓')} ${this.#fit(this.#current.label, 12)} ${this.#style.dim(took)}`);
    this.#current = undefined;
  }

  #print(line: string): void {
    this.#clearLive();
    this.#stream.write(`${line}\n`);
  }

  #drawLive(): void {
    if (this.#plain || !this.#current) return;
    const clock = `[${formatElapsed(this.#now() - this.#started)}]`;
    const head = `${this.#style.cyan('›')} ${this.#style.dim(clock)} ${this.#fit(this.#current.label, clock.length + 3)}`;
    const detail = this.#detail ? `\n  ${this.#style.dim(this.#fit(this.#detail, 2))}` : '\n';
    this.#clearLive();
    this.#stream.write(`${head}${detail}`);
    this.#liveShown = true;
  }

  /** The live region is two lines: the step, and its latest output. */
  #clearLive(): void {
    if (!this.#liveShown) return;
    this.#stream.write('\r\x1b[2K\x1b[1A\r\x1b[2K');
    this.#liveShown = false;
  }

  /** Builder output is untrusted text from a Dockerfile's commands: sanitised, one line, fitted to the terminal. */
  #fit(text: string, reserved: number): string {
    // A pseudo-terminal without a size reports 0 columns.
    const columns = Math.max(20, (this.#stream.columns || 80) - reserved);
    return truncateToWidth(sanitize(text).replace(/\n/g, ' '), columns);
  }
}
