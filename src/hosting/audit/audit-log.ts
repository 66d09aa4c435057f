import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { parseOptions } from '../../contracts/parse-options.js';
import { ToolcellError, ToolErrorType, errorMessage } from '../../errors.js';
import type { HostingEvent, HostingObserver } from '../hosting-events.js';
import { redactArgs } from './redact.js';

const AuditLogOptionsSchema = z.strictObject({
  /** The log file; created (mode 0600) when missing, never truncated. */
  path: z.string().min(1),
  /**
   * Also wait for the disk (O_DSYNC) before a record resolves, so a power cut
   * loses at most the line being written too; without it, a crash of this
   * process loses nothing already recorded, a crash of the machine may.
   */
  sync: z.boolean().default(false),
  /** The clock the `time` field reads; tests pass a fixed one. */
  now: z.custom<() => Date>((value) => typeof value === 'function', { error: 'must be a function' }).default(() => () => new Date()),
});

export type AuditLogOptions = z.input<typeof AuditLogOptionsSchema>;

/**
 * The hosting server's audit trail: append-only JSON Lines, one object a
 * line with `time` (ISO 8601), `event`, `tenant` (null when the event has
 * none) and the event's fields, tool arguments redacted (`redactArgs`).
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
  #handle: FileHandle;
  /** Writes, reopens and the close run one after the other: no line goes to a handle being closed. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  /** Opens (or creates) the log for appending. Throws `audit_log_failed` naming the file. */
  static async open(options: AuditLogOptions): Promise<AuditLog> {
    const parsed = parseOptions(AuditLogOptionsSchema, options, 'AuditLog.open');
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (parsed.sync ? constants.O_DSYNC : 0);
    const handle = await openLog(parsed.path, flags);
    return new AuditLog(parsed.path, flags, parsed.now, handle);
  }

  private constructor(path: string, flags: number, now: () => Date, handle: FileHandle) {
    this.#path = path;
    this.#flags = flags;
    this.#now = now;
    this.#handle = handle;
  }

  get path(): string {
    return this.#path;
  }

  /**
   * Appends the event's line; resolves once it is written. Rejects with
   * `audit_log_failed` when it could not be (disk full, log closed): the
   * server then does not answer the call it was recording.
   */
  record(event: HostingEvent): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(this.#entry(event))}\n`, 'utf8');
    return this.#enqueue(async () => {
      if (this.#closed) throw new ToolcellError(ToolErrorType.AUDIT_LOG_FAILED, `The audit log ${this.#path} is closed`);
      await writeAll(this.#handle, line, this.#path);
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

  /** Waits for pending records, then closes the file. */
  close(): Promise<void> {
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
    const entry: Record<string, unknown> = { time: this.#now().toISOString(), event: name, tenant, ...fields };
    if (event.event === 'tool_call') entry['args'] = redactArgs(event.args);
    return entry;
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
