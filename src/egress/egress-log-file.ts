import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { EgressEvent } from './egress-event.js';

/** An egress log: one JSON object a line, appended; the file is created 0600 in a 0700 folder. */
export interface EgressLogFile {
  write(event: EgressEvent): void;
  /** Flushes what was written and closes the file. */
  close(): Promise<void>;
}

/**
 * Opens `path` for appending egress events. Each event is one write of one
 * line, so the proxy (in the shell thread) and web_fetch (on the main
 * thread) can append to the same file without tearing each other's lines.
 * A log that cannot be written is reported on stderr, once per error, and
 * never takes the sandbox or the fetch down with it.
 */
export function openEgressLog(path: string): EgressLogFile {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const stream: WriteStream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  stream.on('error', (error) => process.stderr.write(`toolcell: egress log ${path}: ${error.message}\n`));
  return {
    write: (event) => void stream.write(`${JSON.stringify(event)}\n`),
    close: () => new Promise<void>((resolve) => stream.end(() => resolve())),
  };
}
