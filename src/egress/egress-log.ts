import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { jsonLogLine, type LogVolume } from '../telemetry/log-line.js';
import { RepeatAggregator, type OverflowCount, type RepeatCount } from '../telemetry/repeat-aggregator.js';
import type { EgressEvent } from './egress-event.js';

export interface EgressLogOptions {
  /** Appended to (created 0600, its folder 0700). */
  path: string;
  /** How long repeats of one destination are counted before their count record is written. Default 60 s. */
  intervalMs?: number;
  /** Destinations counted one by one per interval; past them, one count record per action. Default 100. */
  maxDestinations?: number;
  /** A write failure (a full disk); the log goes on, the sandbox is never taken down with it. */
  onError?: (error: Error) => void;
}

/** One egress line is at most this long: a host name is at most 253 characters, a reason a sentence. */
const MAX_LINE_BYTES = 4096;
const MAX_STRING_CHARS = 512;

/**
 * The egress proxy's event file: one JSON object a line, each bounded and
 * escaped (`jsonLogLine`), and repeats counted per destination (action, how,
 * host, port, reason) and interval (`RepeatAggregator`): the first connection
 * to a destination in an interval is written as it comes, the rest as one
 * line with `count`, `since` and `until` when the interval ends. Destinations
 * past `maxDestinations` in one interval are counted together, in a line
 * whose host is `*`. So 50,000 refused CONNECTs write a few lines, not 50,000.
 */
export class EgressLog {
  readonly #stream: WriteStream;
  readonly #aggregator: RepeatAggregator<EgressEvent>;
  readonly #volume: LogVolume = { lines: 0, bytes: 0, counted: 0 };

  constructor(options: EgressLogOptions) {
    mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
    this.#stream = createWriteStream(options.path, { flags: 'a', mode: 0o600 });
    const onError = options.onError ?? (() => {});
    const maxDestinations = options.maxDestinations ?? 100;
    this.#stream.on('error', onError);
    this.#aggregator = new RepeatAggregator<EgressEvent>({
      intervalMs: options.intervalMs ?? 60_000,
      maxKeys: maxDestinations,
      keyOf: (event) => ({ key: `${event.action}|${event.via}|${event.host}|${event.port}|${event.reason ?? ''}`, group: event.action }),
      onCounts: (counts) => {
        for (const count of counts) this.#write(countRecord(count, maxDestinations));
      },
    });
  }

  get volume(): LogVolume {
    return { ...this.#volume };
  }

  /** Writes the event, or counts it as a repeat of its destination. */
  write(event: EgressEvent): void {
    if (this.#aggregator.admit(event, event.count ?? 1)) this.#write(event);
    else this.#volume.counted += event.count ?? 1;
  }

  /** Writes the counts still open, then closes the file. */
  close(): Promise<void> {
    this.#aggregator.close();
    return new Promise((resolve) => this.#stream.end(resolve));
  }

  #write(event: EgressEvent): void {
    if (this.#stream.writableEnded) return;
    const line = jsonLogLine(event as unknown as Record<string, unknown>, {
      maxLineBytes: MAX_LINE_BYTES,
      maxStringChars: MAX_STRING_CHARS,
      keep: ['time', 'action', 'via', 'port', 'count'],
    });
    this.#volume.lines++;
    this.#volume.bytes += Buffer.byteLength(line);
    this.#stream.write(line);
  }
}

/** The line of a count: the destination's first event with the count, or a `*` line for the destinations past the limit. */
function countRecord(count: RepeatCount<EgressEvent> | OverflowCount<EgressEvent>, maxDestinations: number): EgressEvent {
  const time = new Date().toISOString();
  const span = { since: new Date(count.since).toISOString(), until: new Date(count.until).toISOString() };
  if (count.kind === 'repeats') {
    const { time: _first, count: _weight, since: _since, until: _until, ...first } = count.first;
    return { time, ...first, count: count.count, ...span };
  }
  const { action, via, client } = count.sample;
  const reason = `${count.keys}${count.keys >= maxDestinations ? ' or more' : ''} other destinations in this interval, counted together`;
  return { time, client, action, via, host: '*', port: 0, reason, count: count.count, ...span };
}

/** An EgressLog at `path` whose write failures are said on stderr (a log that cannot be written never takes the sandbox or a fetch down). */
export function openEgressLog(path: string): EgressLog {
  return new EgressLog({ path, onError: (error) => process.stderr.write(`toolcell: egress log ${path}: ${error.message}\n`) });
}
