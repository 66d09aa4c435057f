import type { LiveOutput } from '../../contracts/live-output.js';
import type { SkippedOutput } from '../../backends/backend.js';
import { BinarySniffer } from './binary-sniffer.js';
import { ByteTail } from './byte-tail.js';
import { countLineFeeds } from './count-line-feeds.js';
import { formatBytes } from './format-bytes.js';
import { LiveThrottle } from './live-throttle.js';
import { StreamText } from './stream-text.js';
import { DEFAULT_RENDER_BUDGET_MS } from './parse-budget.js';
import { TerminalRenderer } from './terminal-renderer.js';

/** Limits and settings of one command's output handling. */
export interface OutputLimits {
  /** Raw bytes rendered; past this, bytes are only counted (and the last `tailBytes` kept). */
  maxBytes: number;
  /** Raw bytes kept from the end of an output that passed `maxBytes`. */
  tailBytes: number;
  /** Leading bytes sniffed for binary data. */
  sniffBytes: number;
  /** Characters of rendered text kept from the start and from the end. */
  headChars: number;
  tailChars: number;
  /** Minimum time between two live updates. */
  liveIntervalMs: number;
  /** Lines in a live update. */
  liveLines: number;
  cols: number;
  rows: number;
  scrollback: number;
  /** Milliseconds the terminal emulator may spend on one command's output (TerminalRenderer). */
  renderBudgetMs?: number;
}

/** What a finished command's output came to. */
export interface RenderedOutput {
  /** Rendered text (pty), or stdout then stderr (pipes); a one-line note for binary output. */
  output: string;
  stdout?: string;
  stderr?: string;
  binary: { bytes: number } | null;
  /** True when `output` keeps only the start and end (the byte cap, the render budget or the character budget cut it). */
  truncated: boolean;
  totalBytes: number;
  /** Line feeds written, plus an unterminated last line; counted on every byte, past the caps too. */
  totalLines: number;
}

type Stream = 'stdout' | 'stderr';

/**
 * Everything between a command's raw bytes and what people and the model
 * see: byte counting with a cap, binary sniffing, rendering (a headless
 * terminal for a PTY, UTF-8 text per pipe), and throttled live updates.
 * `push` is cheap and synchronous; memory is bounded by the limits, not by
 * how much the command writes.
 */
export class OutputPipeline {
  readonly #limits: OutputLimits;
  readonly #onLive: ((output: LiveOutput) => void) | undefined;
  readonly #sniffer: BinarySniffer;
  readonly #pty: boolean;
  /** Made on the first byte to render: a command with no output (most) never pays for a terminal. */
  #terminal: TerminalRenderer | undefined;
  readonly #streams: Record<Stream, StreamText> | undefined;
  readonly #tails: Record<Stream, ByteTail>;
  readonly #throttle: LiveThrottle;
  #totalBytes = 0;
  #lineFeeds = 0;
  #endsWithLineFeed = false;
  #renderedBytes = 0;
  #binary = false;
  #disposed = false;
  #lastLive = '';
  readonly #redact: (text: string) => string;

  /** `redact` is applied to every text that leaves: live updates and the result (a session's secrets). */
  constructor(options: { mode: 'pty' | 'pipes'; limits: OutputLimits; onLive?: (output: LiveOutput) => void; redact?: (text: string) => string }) {
    const limits = options.limits;
    this.#limits = limits;
    this.#redact = options.redact ?? ((text) => text);
    this.#onLive = options.onLive;
    this.#sniffer = new BinarySniffer(limits.sniffBytes);
    const text = { headChars: limits.headChars, tailChars: limits.tailChars };
    this.#pty = options.mode === 'pty';
    if (!this.#pty) {
      this.#streams = {
        stdout: new StreamText({ ...text, liveLines: limits.liveLines }),
        stderr: new StreamText({ ...text, liveLines: limits.liveLines }),
      };
    }
    const tailBytes = options.mode === 'pty' ? limits.tailBytes : Math.ceil(limits.tailBytes / 2);
    this.#tails = { stdout: new ByteTail(tailBytes), stderr: new ByteTail(options.mode === 'pty' ? 0 : tailBytes) };
    this.#throttle = new LiveThrottle({ intervalMs: limits.liveIntervalMs, publish: () => this.#publish() });
  }

  get totalBytes(): number {
    return this.#totalBytes;
  }

  get binary(): boolean {
    return this.#binary;
  }

  /** Raw bytes kept from the end of each stream past `maxBytes`: what a sandbox's output budget must send back. */
  get tailBytesPerStream(): number {
    return Math.max(this.#tails.stdout.capacity, this.#tails.stderr.capacity);
  }

  /**
   * Output the sandbox dropped past its budget (counted there, never sent).
   * It lies past `maxBytes`, so only the counts move; the stream's kept end
   * arrives after it through `push`.
   */
  skip(skipped: SkippedOutput): void {
    if (this.#disposed || skipped.bytes === 0) return;
    this.#totalBytes += skipped.bytes;
    this.#lineFeeds += skipped.lineFeeds;
    this.#endsWithLineFeed = skipped.endsWithLineFeed;
    if (this.#binary) this.#throttle.changed();
  }

  push(chunk: Uint8Array, stream: Stream = 'stdout'): void {
    if (this.#disposed || chunk.length === 0) return;
    this.#totalBytes += chunk.length;
    this.#lineFeeds += countLineFeeds(chunk);
    this.#endsWithLineFeed = chunk[chunk.length - 1] === 0x0a;
    if (this.#binary) {
      this.#throttle.changed();
      return;
    }
    if (this.#sniffer.push(chunk)) {
      this.#binary = true;
      this.#terminal?.dispose();
      this.#onLive?.({ type: 'binary_detected', bytesReceived: this.#totalBytes });
      return;
    }
    // Once the renderer's time is spent, bytes are handled like those past the cap.
    const room = this.#terminal?.exhausted ? 0 : this.#limits.maxBytes - this.#renderedBytes;
    const rendered = room >= chunk.length ? chunk : chunk.subarray(0, Math.max(0, room));
    if (rendered.length > 0) {
      this.#renderedBytes += rendered.length;
      if (this.#pty) this.#renderer().write(rendered);
      else {
        this.#streams![stream].write(rendered);
        this.#throttle.changed();
      }
    }
    // A terminal's tail keeps every byte: if rendering stops at its time
    // budget, what the renderer dropped unparsed is still the end to show.
    if (this.#pty) this.#tails.stdout.push(chunk);
    else if (rendered.length < chunk.length) this.#tails[stream].push(chunk.subarray(rendered.length));
  }

  /** Stops live updates, waits for the renderer and returns the result. Call once. */
  async finish(): Promise<RenderedOutput> {
    const rendered = await this.#finish();
    return {
      ...rendered,
      output: this.#redact(rendered.output),
      ...(rendered.stdout !== undefined ? { stdout: this.#redact(rendered.stdout) } : {}),
      ...(rendered.stderr !== undefined ? { stderr: this.#redact(rendered.stderr) } : {}),
    };
  }

  async #finish(): Promise<RenderedOutput> {
    this.#throttle.stop();
    const totalBytes = this.#totalBytes;
    const totalLines = this.#lineFeeds + (totalBytes > 0 && !this.#endsWithLineFeed ? 1 : 0);
    const result = { binary: null, truncated: totalBytes > this.#renderedBytes, totalBytes, totalLines };
    if (this.#binary) {
      this.#terminal?.dispose();
      return { ...result, output: binaryNote(totalBytes), binary: { bytes: totalBytes } };
    }
    if (this.#pty) {
      // No terminal: nothing was ever written.
      if (!this.#terminal) return { ...result, output: '' };
      let output = await this.#terminal.finish();
      const stopped = this.#terminal.exhausted;
      const cut = this.#terminal.cut;
      this.#terminal.dispose();
      const kept = this.#tails.stdout.bytes();
      if (stopped) {
        output = this.#withTail(output, await renderTerminalTail(kept, this.#limits), this.#stoppedNote());
        return { ...result, output, truncated: true };
      }
      if (result.truncated) {
        // Only bytes past the cap: the rest was rendered above.
        const unrendered = kept.subarray(Math.max(0, kept.length - (totalBytes - this.#renderedBytes)));
        output = this.#withTail(output, await renderTerminalTail(unrendered, this.#limits));
      }
      return { ...result, output, truncated: result.truncated || cut };
    }
    let stdout = this.#streams!.stdout.finish();
    let stderr = this.#streams!.stderr.finish();
    if (result.truncated) {
      if (this.#tails.stdout.length > 0) stdout = this.#withTail(stdout, decodeTail(this.#tails.stdout.bytes()));
      if (this.#tails.stderr.length > 0) stderr = this.#withTail(stderr, decodeTail(this.#tails.stderr.bytes()));
    }
    const output = stderr.length === 0 ? stdout : stdout.length === 0 ? stderr : `${stdout.replace(/\n$/, '')}\n${stderr}`;
    return { ...result, output, stdout, stderr, truncated: result.truncated || this.#streams!.stdout.cut || this.#streams!.stderr.cut };
  }

  /** Frees the renderer without waiting (the command's result is no longer wanted). */
  dispose(): void {
    this.#disposed = true;
    this.#throttle.stop();
    this.#terminal?.dispose();
  }

  #withTail(head: string, tail: string, note = this.#truncatedNote()): string {
    const top = head.length === 0 || head.endsWith('\n') ? head : `${head}\n`;
    return tail.length > 0 ? `${top}${note}\n${tail}` : `${top}${note}`;
  }

  #renderer(): TerminalRenderer {
    const limits = this.#limits;
    this.#terminal ??= new TerminalRenderer({
      headChars: limits.headChars,
      tailChars: limits.tailChars,
      cols: limits.cols,
      rows: limits.rows,
      scrollback: limits.scrollback,
      ...(limits.renderBudgetMs === undefined ? {} : { renderBudgetMs: limits.renderBudgetMs }),
      onParsed: () => this.#throttle.changed(),
    });
    return this.#terminal;
  }

  #truncatedNote(): string {
    return (
      `[... output truncated: the command wrote ${this.#totalBytes} bytes (${formatBytes(this.#totalBytes)}); ` +
      `the first ${this.#renderedBytes} bytes are shown above and the end below ...]`
    );
  }

  #stoppedNote(): string {
    const seconds = ((this.#limits.renderBudgetMs ?? DEFAULT_RENDER_BUDGET_MS) / 1000).toString();
    return (
      `[... output truncated: the command wrote ${this.#totalBytes} bytes (${formatBytes(this.#totalBytes)}) whose escape sequences ` +
      `took more than ${seconds} s to render; what was rendered is shown above and the end below ...]`
    );
  }

  #publish(): void {
    if (!this.#onLive) return;
    if (this.#binary) {
      this.#onLive({ type: 'binary_progress', bytesReceived: this.#totalBytes });
      return;
    }
    const text = this.#redact(this.#pty ? (this.#terminal?.snapshot(this.#limits.liveLines) ?? '') : liveText(this.#streams!));
    if (text === this.#lastLive || text.trim().length === 0) return;
    this.#lastLive = text;
    this.#onLive(text);
  }
}

function liveText(streams: Record<Stream, StreamText>): string {
  const stdout = streams.stdout.recentLines();
  const stderr = streams.stderr.recentLines();
  return stderr.length === 0 ? stdout : `${stdout}\n${stderr}`;
}

/** The one line the model gets instead of binary bytes. */
export function binaryNote(bytes: number): string {
  return `[Binary output detected: the command wrote ${bytes} bytes (${formatBytes(bytes)}) of binary data; it is not shown.]`;
}

/** Renders the kept end of a truncated terminal stream; its first, partial line is dropped. */
async function renderTerminalTail(bytes: Uint8Array, limits: OutputLimits): Promise<string> {
  if (bytes.length === 0) return '';
  const renderer = new TerminalRenderer({
    cols: limits.cols,
    rows: limits.rows,
    scrollback: limits.scrollback,
    headChars: 0,
    tailChars: bytes.length * 4,
    ...(limits.renderBudgetMs === undefined ? {} : { renderBudgetMs: limits.renderBudgetMs }),
  });
  try {
    renderer.write(bytes);
    return dropFirstLine(await renderer.finish());
  } finally {
    renderer.dispose();
  }
}

function decodeTail(bytes: Uint8Array): string {
  return dropFirstLine(new TextDecoder('utf-8').decode(bytes));
}

function dropFirstLine(text: string): string {
  const firstBreak = text.indexOf('\n');
  return firstBreak >= 0 ? text.slice(firstBreak + 1) : text;
}
