import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { parseOptions } from '../contracts/parse-options.js';
import type { TelemetrySink, ToolCallEvent } from './events.js';

const jsonlFileSinkOptionsSchema = z.strictObject({
  /** The file to append to; it and its folder are created. */
  path: z.string().min(1),
});

/** Appends one JSON line per finished tool call to a file (created with its folder). */
export class JsonlFileSink implements TelemetrySink {
  readonly #stream: WriteStream;

  constructor(raw: z.input<typeof jsonlFileSinkOptionsSchema>) {
    const options = parseOptions(jsonlFileSinkOptionsSchema, raw, 'JsonlFileSink');
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
