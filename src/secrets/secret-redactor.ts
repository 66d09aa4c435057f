import { ByteStreamRedactor, type Needle } from './byte-stream-redactor.js';
import { secretVariants } from './secret-variants.js';

/** A secret value shorter than this is refused: it could not be told apart from ordinary output. */
export const MIN_SECRET_CHARS = 8;

/** What stands in a text where a secret (or an encoded form of it) was. */
export function redactionMark(name: string): string {
  return `[REDACTED:${name}]`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Removes a set of named secret values, and the encoded forms a command
 * might print them in (secretVariants), from text and byte streams. Built
 * from the secrets a sandbox session was given; used by the shell thread's
 * output pipeline (live output, the rendered result, the saved output file)
 * and by the scheduler on every tool's result, before either reaches the
 * model, a client, a log or the disk.
 */
export class SecretRedactor {
  readonly #pattern: RegExp;
  readonly #marks = new Map<string, string>();
  readonly #needles: Needle[];

  private constructor(secrets: Readonly<Record<string, string>>) {
    const entries: Array<[string, string]> = [];
    for (const [name, value] of Object.entries(secrets)) for (const variant of secretVariants(value)) entries.push([variant, name]);
    // Longest first: a value that contains another is replaced whole.
    entries.sort((a, b) => b[0].length - a[0].length);
    for (const [variant, name] of entries) if (!this.#marks.has(variant)) this.#marks.set(variant, redactionMark(name));
    this.#pattern = new RegExp([...this.#marks.keys()].map(escapeRegExp).join('|'), 'g');
    this.#needles = [...this.#marks].map(([variant, mark]) => ({ bytes: Buffer.from(variant, 'utf8'), mark: Buffer.from(mark, 'utf8') }));
  }

  /** A redactor for these secrets, or undefined when there are none (nothing to do). */
  static of(secrets: Readonly<Record<string, string>> | undefined): SecretRedactor | undefined {
    return secrets !== undefined && Object.keys(secrets).length > 0 ? new SecretRedactor(secrets) : undefined;
  }

  redact(text: string): string {
    return text.replace(this.#pattern, (found) => this.#marks.get(found) ?? found);
  }

  /** Every string inside a JSON-like value redacted (tool arguments for the audit log). */
  redactValue<T>(value: T): T {
    if (typeof value === 'string') return this.redact(value) as T;
    if (Array.isArray(value)) return value.map((item: unknown) => this.redactValue(item)) as T;
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.redact(key), this.redactValue(item)])) as T;
    }
    return value;
  }

  /** A redactor for one byte stream (a command's stdout), which may cut a secret between two chunks. */
  byteStream(): ByteStreamRedactor {
    return new ByteStreamRedactor(this.#needles);
  }
}
