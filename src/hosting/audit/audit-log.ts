import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { integerOption, parseOptions } from '../../contracts/parse-options.js';
import { ToolcellError, ToolErrorType, errorMessage } from '../../errors.js';
import { jsonLogLine, type LogVolume } from '../../telemetry/log-line.js';
import { RepeatAggregator } from '../../telemetry/repeat-aggregator.js';
import type { HostingEvent, HostingObserver } from '../operations/hosting-events.js';
import { argumentRedaction, DEFAULT_MAX_STRING_CHARS } from './redact.js';
import { countEntry, repeatKeyOf } from './repeat-records.js';

const AuditLogOptionsSchema = z.strictObject({
  /** The log file; created (mode 0600) when missing, never truncated. */
  path: z.string().min(1),
  /**
   * Also wait for the disk (O_DSYNC) before a record resolves, so a power cut
   * loses at most the line being written too; without it, a crash of this
   * process loses nothing already recorded, a crash of the machine may.
   */
  sync: z.boolean().default(false),
  /** In a cluster: this node's name, in every line's `node` field (after `time`) so that lines gathered from every node say where they happened. */
  node: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/, { error: 'must be a node name (letters, digits, dashes)' })
    .optional(),
  /** The clock the `time` field reads; tests pass a fixed one. */
  now: z.custom<() => Date>((value) => typeof value === 'function', { error: 'must be a function' }).default(() => () => new Date()),
  /** No line, its newline included, is longer than this (`jsonLogLine`): 16 KiB. */
  maxLineBytes: integerOption(1024, 16 * 1024, 64 * 1024 * 1024),
  /** A string value keeps this many characters, then its length and SHA-256: 4096 (a command, a path, an edit). */
  maxStringChars: integerOption(64, DEFAULT_MAX_STRING_CHARS, 64 * 1024 * 1024),
  /**
   * Refusals, bad credentials and egress connections are counted per source,
   * destination or limit over this long (`repeat-records.ts`): the first of
   * each is written at once, the rest as one count record at the end. 60 s.
   */
  repeatIntervalMs: integerOption(10, 60_000),
  /** Distinct sources or destinations counted one by one per interval; past them, per event and tenant. 100. */
  repeatKeys: integerOption(1, 100, 100_000),
  /** A count record that could not be written (nobody waits for one). */
  onError: z.custom<(error: unknown) => void>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
});

export type AuditLogOptions = z.input<typeof AuditLogOptionsSchema>;
type ResolvedAuditLogOptions = z.output<typeof AuditLogOptionsSchema>;

/**
 * The hosting server's audit trail: append-only JSON Lines, one object a
 * line with `time` (ISO 8601), `event`, `tenant` (null when the event has
 * none) and the event's fields, tool arguments redacted
 * (`argumentRedaction`). No input makes a line longer than `maxLineBytes`
 * (long values keep their head, their length and SHA-256), or makes it two
 * lines for any reader (line separators and C1 controls are escaped); floods
 * of refusals become count records (`repeat-records.ts`), so the log grows
 * with the calls made, not with what a tenant sends.
 *
 * Each line is one `write(2)` on a descriptor opened with O_APPEND, with
 * nothing buffered across lines: the kernel appends it whole, also when
 * another process appends to the same file, and a crash loses at most the
 * line being written. `record` resolves once the write returned; records
 * are written in the order they were made. The file is never truncated:
 * `reopen()` (on SIGHUP, see `reopenOnSighup`) opens the path again, so a
 * log rotated by rename continues in a fresh file.
 */
export class AuditLog implements HostingObserver {
  readonly #path: string;
  readonly #flags: number;
  readonly #now: () => Date;
  readonly #options: ResolvedAuditLogOptions;
  readonly #repeats: RepeatAggregator<HostingEvent>;
  readonly #volume: LogVolume = { lines: 0, bytes: 0, counted: 0 };
  #handle: FileHandle;
  /** Writes, reopens and the close run one after the other: no line goes to a handle being closed. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  /** Opens (or creates) the log for appending. Throws `audit_log_failed` naming the file. */
  static async open(options: AuditLogOptions): Promise<AuditLog> {
    const parsed = parseOptions(AuditLogOptionsSchema, options, 'AuditLog.open');
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (parsed.sync ? constants.O_DSYNC : 0);
    const handle = await openLog(parsed.path, flags);
    return new AuditLog(parsed, flags, handle);
  }

  private constructor(options: ResolvedAuditLogOptions, flags: number, handle: FileHandle) {
    this.#options = options;
    this.#path = options.path;
    this.#flags = flags;
    this.#now = options.now;
    this.#handle = handle;
    this.#repeats = new RepeatAggregator<HostingEvent>({
      intervalMs: options.repeatIntervalMs,
      maxKeys: options.repeatKeys,
      keyOf: repeatKeyOf,
      onCounts: (counts) => {
        for (const count of counts) this.#write(countEntry(count, this.#now())).catch((error: unknown) => this.#options.onError?.(error));
      },
      now: () => this.#now().getTime(),
    });
  }

  get path(): string {
    return this.#path;
  }

  /** Lines and bytes written so far, and events folded into count records (the log-volume metric). */
  get volume(): LogVolume {
    return { ...this.#volume };
  }

  /**
   * Appends the event's line; resolves once it is written. Rejects with
   * `audit_log_failed` when it could not be (disk full, log closed): the
   * server then does not answer the call it was recording.
   */
  record(event: HostingEvent): Promise<void> {
    if (this.#closed) return Promise.reject(new ToolcellError(ToolErrorType.AUDIT_LOG_FAILED, `The audit log ${this.#path} is closed`));
    const weight = 'count' in event && typeof event.count === 'number' ? event.count : 1;
    if (!this.#repeats.admit(event, weight)) {
      this.#volume.counted += weight;
      return Promise.resolve();
    }
    return this.#write(this.#entry(event));
  }

  #write(record: Record<string, unknown>): Promise<void> {
    // Count records too: every line says its node.
    const entry = this.#options.node === undefined ? record : { time: record.time, node: this.#options.node, ...record };
    const line = Buffer.from(
      jsonLogLine(entry, { maxLineBytes: this.#options.maxLineBytes, maxStringChars: this.#options.maxStringChars, ...argumentRedaction('args') }),
      'utf8',
    );
    return this.#enqueue(async () => {
      if (this.#closed) throw new ToolcellError(ToolErrorType.AUDIT_LOG_FAILED, `The audit log ${this.#path} is closed`);
      await writeAll(this.#handle, line, this.#path);
      this.#volume.lines++;
      this.#volume.bytes += line.length;
    });
  }

  /**
   * Opens the path again and writes there from now on (after a rotation
   * renamed the old file away); lines recorded before are in the old file.
   * On failure the old descriptor stays in use and the error is thrown.
   */
  reopen(): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#closed) return;
      const fresh = await openLog(this.#path, this.#flags);
      const old = this.#handle;
      this.#handle = fresh;
      await old.close();
    });
  }

  /** Writes the counts still open, waits for pending records, then closes the file. */
  close(): Promise<void> {
    this.#repeats.close();
    return this.#enqueue(async () => {
      if (this.#closed) return;
      this.#closed = true;
      await this.#handle.close();
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #entry(event: HostingEvent): Record<string, unknown> {
    const { event: name, ...fields } = event;
    const tenant = 'tenant' in fields && fields.tenant !== undefined ? fields.tenant : null;
    return { time: this.#now().toISOString(), event: name, tenant, ...fields };
  }

  #enqueue(step: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(step);
    // The queue goes on after a failed step; the failure reaches that step's caller only.
    this.#queue = run.catch(() => {});
    return run;
  }
}

async function openLog(path: string, flags: number): Promise<FileHandle> {
  try {
    const handle = await open(path, flags, 0o600);
    // A line torn by a crash or a full disk would swallow the next one: end it first, so it stays one bad line of its own.
    if (!(await endsWithNewline(path)))
      await handle.write('\n').catch(async (error: unknown) => {
        await handle.close();
        throw error;
      });
    return handle;
  } catch (error) {
    throw new ToolcellError(ToolErrorType.AUDIT_LOG_FAILED, `Cannot open the audit log ${path}: ${errorMessage(error)}`, { cause: error });
  }
}

/** True when the file is empty or its last byte is a newline; also when it cannot be read (a write-only log is left as it is). */
async function endsWithNewline(path: string): Promise<boolean> {
  const reader = await open(path, constants.O_RDONLY).catch(() => undefined);
  if (!reader) return true;
  try {
    const { size } = await reader.stat();
    if (size === 0) return true;
    const last = Buffer.alloc(1);
    await reader.read(last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    await reader.close();
  }
}

/**
 * One write for the line; a short write (a full disk, a signal) is finished
 * by another append, which O_APPEND still puts at the end.
 */
async function writeAll(handle: FileHandle, line: Buffer, path: string): Promise<void> {
  let offset = 0;
  try {
    while (offset < line.length) {
      const { bytesWritten } = await handle.write(line, offset, line.length - offset);
      offset += bytesWritten;
    }
  } catch (error) {
    throw new ToolcellError(ToolErrorType.AUDIT_LOG_FAILED, `Cannot write the audit log ${path}: ${errorMessage(error)}`, { cause: error });
  }
}
