import type { SavedOutput } from '../../contracts/saved-output.js';
import { BoundedText } from './bounded-text.js';
import { ByteTail } from './byte-tail.js';
import { CappedFile, type CappedFileResult } from './capped-file.js';
import type { CreateOutputFile } from './create-output-file.js';
import { PlainTextFilter } from './plain-text.js';

type Stream = 'stdout' | 'stderr';

/** Why a command ended early, for the file's closing line. */
export type StopReason = 'cancel' | 'inactivity' | 'wall';

/** Raw bytes kept per character of the tail excerpt once the file is full: room for UTF-8 and escape sequences. */
const RAW_BYTES_PER_CHAR = 4;

export interface OutputSaverOptions {
  mode: 'pty' | 'pipes';
  /** The file's final path (in the tool-outputs folder). */
  path: string;
  /**
   * Plain-text characters past which the output goes to the file; shorter
   * outputs (most) never touch the disk. Also the characters of plain text
   * kept from the start and from the end for the model (`excerpt`).
   */
  afterChars: number;
  /** The file's size cap (`shell.savedOutputMaxBytes`). */
  maxBytes: number;
  create?: CreateOutputFile;
  /** Applied to the plain text before it is written or kept (a session's secrets); its lines are whole, so a secret is never split. */
  redact?: (text: string) => string;
}

/** What a saved output came to, with the start and end of its text for the model. */
export interface SavedOutputWithExcerpt extends SavedOutput {
  /** The plain text's first and last `afterChars` characters or so, a one-line note between them when they are not all of it. */
  excerpt: string;
}

/**
 * Saves a command's whole output as it arrives: raw chunks become plain
 * text (PlainTextFilter, one per stream; pipes' lines interleave as they
 * complete), which goes to a CappedFile once it passes `afterChars`, while
 * its start and end are kept for the model. Once the file is full, later
 * bytes are no longer filtered (6 MB of coloured text costs the filter
 * about 0.25 s here, and a flood can go on for minutes): only their last
 * few are kept, and filtered at the end for the excerpt's tail. Memory
 * stays bounded: the text before the threshold, the excerpt, one write
 * buffer, one open line.
 */
export class OutputSaver {
  readonly #options: OutputSaverOptions;
  readonly #filters: Partial<Record<Stream, PlainTextFilter>>;
  readonly #excerpt: BoundedText;
  #pending: string[] = [];
  #chars = 0;
  #file: CappedFile | undefined;
  /** Set once the file is full: the raw end of each stream, for the excerpt. */
  #rawTails: Partial<Record<Stream, ByteTail>> | undefined;
  /** Set when the sandbox dropped output (past its budget) before the file was full. */
  #gap = false;

  constructor(options: OutputSaverOptions) {
    this.#options = options;
    this.#filters = options.mode === 'pty' ? { stdout: new PlainTextFilter() } : { stdout: new PlainTextFilter(), stderr: new PlainTextFilter() };
    this.#excerpt = new BoundedText({ headChars: options.afterChars, tailChars: options.afterChars });
  }

  push(chunk: Uint8Array, stream: Stream = 'stdout'): void {
    const key = this.#filters[stream] ? stream : 'stdout';
    if (this.#rawTails) {
      this.#rawTails[key]!.push(chunk);
      return;
    }
    const text = this.#filters[key]!.push(chunk);
    if (text.length > 0) this.#take(text);
    if (this.#file?.cut) this.#keepRawTails();
  }

  /** Raw bytes of each stream's end kept once the file is full (a sandbox's output budget keeps at least these). */
  static rawTailBytes(afterChars: number): number {
    return afterChars * RAW_BYTES_PER_CHAR;
  }

  /**
   * The sandbox dropped output here (past its output budget): the file ends
   * at this point, saying so, and only the output's end is kept for the excerpt.
   */
  skip(): void {
    if (this.#rawTails) return;
    this.#gap = true;
    this.#file?.stop();
    this.#keepRawTails();
  }

  #keepRawTails(): void {
    const capacity = OutputSaver.rawTailBytes(this.#options.afterChars);
    this.#rawTails = this.#options.mode === 'pty' ? { stdout: new ByteTail(capacity) } : { stdout: new ByteTail(capacity), stderr: new ByteTail(capacity) };
  }

  /**
   * Ends the file, with a closing line when it was cut at its cap or the
   * command was stopped. Resolves to undefined when the output stayed under
   * `afterChars` (nothing was written). `bytes` and `lines` are the whole
   * output's, counted on the raw stream.
   */
  async finish(options: { bytes: number; lines: number; stopped: StopReason | null }): Promise<SavedOutputWithExcerpt | undefined> {
    if (!this.#rawTails) this.#takeLastLines();
    this.#pending = [];
    if (!this.#file) return undefined;
    const { bytes, lines, stopped } = options;
    const saved = await this.#file.close((counts) => closingLine(counts, { maxBytes: this.#options.maxBytes, gap: this.#gap, bytes, lines, stopped }));
    return {
      ...(saved.path !== undefined ? { path: saved.path } : { error: saved.error ?? 'unknown error' }),
      bytes,
      lines,
      cut: saved.cut,
      savedBytes: saved.savedBytes,
      savedLines: saved.savedLines,
      excerpt: this.#excerptText(),
    };
  }

  /** Deletes whatever was written (the output is not wanted, e.g. it turned out to be binary). */
  async discard(): Promise<void> {
    this.#pending = [];
    await this.#file?.remove();
  }

  #take(raw: string): void {
    const text = this.#options.redact ? this.#options.redact(raw) : raw;
    this.#chars += text.length;
    this.#excerpt.append(text);
    if (this.#file) {
      this.#file.write(text);
      return;
    }
    this.#pending.push(text);
    if (this.#chars <= this.#options.afterChars) return;
    const { path, maxBytes, create } = this.#options;
    this.#file = new CappedFile({ path, maxBytes, ...(create ? { create } : {}) });
    this.#file.write(this.#pending.join(''));
    this.#pending = [];
  }

  /** Each stream's unterminated last line; one does not run into the next stream's. */
  #takeLastLines(): void {
    const ends = Object.values(this.#filters).map((filter) => filter.end());
    for (const [index, rest] of ends.entries()) {
      const more = ends.slice(index + 1).some((next) => next.length > 0);
      if (rest.length > 0) this.#take(more && !rest.endsWith('\n') ? `${rest}\n` : rest);
    }
  }

  #excerptText(): string {
    const text = this.#excerptUnredacted();
    return this.#options.redact ? this.#options.redact(text) : text;
  }

  #excerptUnredacted(): string {
    if (!this.#rawTails) return this.#excerpt.toString();
    const tail = Object.values(this.#rawTails)
      .map((raw) => {
        const filter = new PlainTextFilter();
        const text = filter.push(raw.bytes()) + filter.end();
        // The kept bytes start inside a line.
        return text.slice(text.indexOf('\n') + 1);
      })
      .join('');
    const { head } = this.#excerpt.parts();
    return `${head}${head.endsWith('\n') ? '' : '\n'}[... the middle of the output is omitted ...]\n${tail}`;
  }
}

/** The file's last line: where it was cut and what was dropped, and whether the command was stopped. */
function closingLine(
  counts: CappedFileResult,
  facts: { maxBytes: number; gap: boolean; bytes: number; lines: number; stopped: StopReason | null },
): string | undefined {
  const notes: string[] = [];
  if (counts.cut) {
    const droppedLines = Math.max(0, facts.lines - counts.savedLines);
    const where = facts.gap
      ? `saved output cut here, after line ${counts.savedLines}, where the sandbox stopped sending the output (it sends the first ${facts.maxBytes} bytes, shell.savedOutputMaxBytes, and the end)`
      : `saved output cut here, after line ${counts.savedLines}, at its size cap of ${facts.maxBytes} bytes (shell.savedOutputMaxBytes)`;
    notes.push(`${where}: ${droppedLines} more lines were not saved (the whole output was ${facts.bytes} bytes in ${facts.lines} lines)`);
  }
  const where = counts.cut ? 'later' : 'here';
  if (facts.stopped === 'cancel') notes.push(`the command was cancelled ${where}`);
  else if (facts.stopped === 'inactivity') notes.push(`the command was stopped ${where} because it printed nothing for too long`);
  else if (facts.stopped === 'wall') notes.push(`the command was stopped ${where} because it ran past its time limit`);
  return notes.length > 0 ? `[... ${notes.join('; ')} ...]` : undefined;
}
