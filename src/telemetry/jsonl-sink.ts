import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { TelemetrySink, ToolCallEvent } from './events.js';

/** Appends one JSON line per finished tool call to a file (created with its folder). */
export class JsonlFileSink implements TelemetrySink {
  readonly #stream: WriteStream;

  constructor(options: { path: string }) {
    if (typeof options?.path !== 'string' || options.path.length === 0) {
      throw new TypeError('JsonlFileSink: options.path must be a non-empty string');
    }
    mkdirSync(dirname(options.path), { recursive: true });
    this.#stream = createWriteStream(options.path, { flags: 'a', mode: 0o600 });
    // A sink must never crash the process: a write failure (disk full) loses events, not the run.
    this.#stream.on('error', () => {});
  }

  record(event: ToolCallEvent): void {
    this.#stream.write(`${JSON.stringify(event)}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#stream.end(resolve));
  }
}
