import { watch, type FSWatcher } from 'node:fs';
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import type { EgressEvent } from '../../egress/egress-event.js';
import type { LogVolume } from '../../telemetry/log-line.js';

const POLL_MS = 250;

/**
 * Follows an egress proxy's event file (one JSON object a line, appended by
 * the shell thread) and hands each whole line's event on, in order. Woken by
 * fs.watch and a poll (watch misses changes on some filesystems); a partial
 * last line waits for its newline. A line that is not an event is skipped.
 */
export class EgressLogTail {
  readonly #file: string;
  readonly #onEvent: (event: EgressEvent) => void;
  readonly #volume: LogVolume | undefined;
  #offset = 0;
  #rest = '';
  /** A character split across two reads is completed by the next. */
  readonly #decoder = new StringDecoder('utf8');
  #watcher: FSWatcher | undefined;
  readonly #poller: NodeJS.Timeout;
  #reading: Promise<void> = Promise.resolve();
  #closed = false;

  /** `volume`, when given, is added to as lines are read: what the proxy wrote (the log-volume metric). */
  static start(file: string, onEvent: (event: EgressEvent) => void, volume?: LogVolume): EgressLogTail {
    return new EgressLogTail(file, onEvent, volume);
  }

  private constructor(file: string, onEvent: (event: EgressEvent) => void, volume: LogVolume | undefined) {
    this.#file = file;
    this.#onEvent = onEvent;
    this.#volume = volume;
    this.#poller = setInterval(() => this.#wake(), POLL_MS);
    this.#poller.unref();
  }

  /** Reads what is left, then stops. */
  async close(): Promise<void> {
    if (this.#closed) return this.#reading;
    this.#closed = true;
    clearInterval(this.#poller);
    this.#watcher?.close();
    this.#reading = this.#reading.then(() => this.#read());
    return this.#reading;
  }

  #wake(): void {
    if (this.#closed) return;
    // The file appears with the first event: watch it from then on.
    if (!this.#watcher) {
      try {
        this.#watcher = watch(this.#file, { persistent: false }, () => this.#wake());
        this.#watcher.on('error', () => undefined);
      } catch {
        // Not there yet, or not watchable: the poll serves.
      }
    }
    this.#reading = this.#reading.then(() => this.#read());
  }

  async #read(): Promise<void> {
    let handle;
    try {
      handle = await open(this.#file, 'r');
    } catch {
      return;
    }
    try {
      for (;;) {
        const buffer = Buffer.alloc(64 * 1024);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.#offset);
        if (bytesRead === 0) break;
        this.#offset += bytesRead;
        if (this.#volume) this.#volume.bytes += bytesRead;
        const lines = (this.#rest + this.#decoder.write(buffer.subarray(0, bytesRead))).split('\n');
        this.#rest = lines.pop() ?? '';
        for (const line of lines) this.#deliver(line);
      }
    } finally {
      await handle.close();
    }
  }

  #deliver(line: string): void {
    if (line.trim() === '') return;
    try {
      const event = JSON.parse(line) as EgressEvent;
      if (this.#volume) {
        this.#volume.lines++;
        if (typeof event.count === 'number') this.#volume.counted += event.count;
      }
      this.#onEvent(event);
    } catch {
      // Not an event (a torn write cannot happen: each line is one append); skipped.
    }
  }
}
