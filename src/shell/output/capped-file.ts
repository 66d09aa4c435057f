import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { errorMessage } from '../../errors.js';
import { countLineFeeds } from './count-line-feeds.js';
import { createOutputFile, type CreateOutputFile, type NewOutputFile } from './create-output-file.js';

/**
 * Text gathered before one write. Writes are synchronous: the shell thread
 * has no way to slow a command down, so an asynchronous queue could only
 * grow with the output. One 64 KiB write to the page cache took 27 µs here;
 * rendering those bytes in the terminal emulator takes milliseconds.
 */
const WRITE_BYTES = 64 * 1024;
const LF = 0x0a;

/** What a closed CappedFile came to. */
export interface CappedFileResult {
  /** The finished file; absent when it could not be written (`error` says why, and nothing is left behind). */
  path?: string;
  error?: string;
  /** Bytes and lines of text in the file, its closing line left out. */
  savedBytes: number;
  savedLines: number;
  /** True when the text passed `maxBytes`: the file ends at the last whole line that fit. */
  cut: boolean;
}

/**
 * A text file written as the text arrives, up to `maxBytes` (cut after the
 * last whole line that fits, then one closing line). It is written under a
 * temporary name beside `path` and renamed to `path` only by `close`, so
 * `path` never holds a file still being written or one a failure cut short:
 * a write error, or `remove`, deletes the temporary file.
 */
export class CappedFile {
  readonly #path: string;
  readonly #tempPath: string;
  readonly #maxBytes: number;
  readonly #opening: Promise<void>;
  #handle: FileHandle | undefined;
  /** Set once the temporary file exists, until it is published or deleted: only then is there something of ours to act on. */
  #file: NewOutputFile | undefined;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #savedBytes = 0;
  #savedLines = 0;
  #endsWithLineFeed = true;
  #cut = false;
  #error: string | undefined;

  constructor(options: { path: string; maxBytes: number; create?: CreateOutputFile }) {
    this.#path = options.path;
    this.#tempPath = `${options.path}.${randomBytes(6).toString('hex')}.partial`;
    this.#maxBytes = options.maxBytes;
    this.#opening = (options.create ?? createOutputFile)(this.#tempPath).then(
      (file) => {
        this.#file = file;
        this.#handle = file.handle;
        this.#flush();
      },
      (error: unknown) => this.#fail(error),
    );
  }

  /** True once the text passed `maxBytes`: later writes are only counted. */
  get cut(): boolean {
    return this.#cut;
  }

  /** Ends the text here, under the cap: later writes are only counted, as past it. */
  stop(): void {
    this.#cut = true;
  }

  write(text: string): void {
    if (this.#error !== undefined || this.#cut || text.length === 0) return;
    let bytes = Buffer.from(text, 'utf8');
    const room = this.#maxBytes - this.#savedBytes;
    if (bytes.length > room) {
      const lastLineFeed = room > 0 ? bytes.lastIndexOf(LF, room - 1) : -1;
      bytes = bytes.subarray(0, lastLineFeed + 1);
      this.#cut = true;
    }
    if (bytes.length === 0) return;
    this.#savedBytes += bytes.length;
    this.#savedLines += countLineFeeds(bytes);
    this.#endsWithLineFeed = bytes[bytes.length - 1] === LF;
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.length;
    if (this.#pendingBytes >= WRITE_BYTES) this.#flush();
  }

  /**
   * Writes what is pending and `closingLine` (when given: a line of its own
   * after the text, not counted against the cap), then gives the file its
   * name. `closingLine` gets the counts so far.
   */
  async close(closingLine?: (counts: CappedFileResult) => string | undefined): Promise<CappedFileResult> {
    await this.#opening;
    const line = this.#error === undefined ? closingLine?.(this.#counts()) : undefined;
    if (line !== undefined) {
      const bytes = Buffer.from(`${this.#endsWithLineFeed ? '' : '\n'}${line}\n`, 'utf8');
      this.#pending.push(bytes);
      this.#pendingBytes += bytes.length;
    }
    this.#flush();
    await this.#closeHandle();
    if (this.#error === undefined) {
      try {
        await this.#file?.publish(basename(this.#path));
        this.#file = undefined;
        return { ...this.#counts(), path: this.#path };
      } catch (error) {
        this.#fail(error);
      }
    }
    await this.#unlink();
    return { ...this.#counts(), error: this.#error ?? 'unknown error' };
  }

  /** Deletes the file (the output is not wanted, e.g. it turned out binary). */
  async remove(): Promise<void> {
    await this.#opening;
    this.#pending = [];
    this.#error ??= 'removed';
    await this.#closeHandle();
    await this.#unlink();
  }

  async #unlink(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    await file?.discard().catch(() => {});
  }

  #counts(): CappedFileResult {
    return { savedBytes: this.#savedBytes, savedLines: this.#savedLines, cut: this.#cut };
  }

  #flush(): void {
    const handle = this.#handle;
    if (!handle || this.#error !== undefined || this.#pendingBytes === 0) return;
    const data = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    try {
      let offset = 0;
      while (offset < data.length) offset += writeSync(handle.fd, data, offset, data.length - offset);
    } catch (error) {
      this.#fail(error);
    }
  }

  #fail(error: unknown): void {
    this.#error ??= errorMessage(error);
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  async #closeHandle(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    try {
      await handle?.close();
    } catch (error) {
      this.#fail(error);
    }
  }
}
