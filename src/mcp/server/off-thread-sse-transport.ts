import { StreamableHTTPServerTransport, type StreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { WorkBudget } from '../../contracts/work-budget.js';
import type { JsonEncodeThread } from './json-encode-thread.js';

/** Messages whose strings hold at least this many characters are encoded off the main thread (below it, inline costs < 1 ms). */
export const OFF_THREAD_MIN_CHARS = 256 * 1024;

/** Past this many values a message counts as large whatever its strings: walking it further would cost what encoding it does. */
const MAX_VALUES_WALKED = 10_000;

/** Whether `value`'s strings (keys included) hold at least `min` characters, or it has too many values to tell cheaply. */
export function holdsAtLeastChars(value: unknown, min: number): boolean {
  let chars = 0;
  let walked = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (++walked > MAX_VALUES_WALKED) return true;
    if (typeof next === 'string') chars += next.length;
    else if (Array.isArray(next))
      for (const item of next as unknown[]) {
        stack.push(item);
        if (stack.length > MAX_VALUES_WALKED) return true;
      }
    else if (typeof next === 'object' && next !== null)
      for (const key of Object.keys(next)) {
        chars += key.length;
        stack.push((next as Record<string, unknown>)[key]);
        if (stack.length > MAX_VALUES_WALKED) return true;
      }
    if (chars >= min) return true;
  }
  return false;
}

/** The SDK's SSE writer, as its web-standard transport has it (a private method there; checked for at run time). */
type WriteSseEvent = (
  controller: ReadableStreamDefaultController<Uint8Array>,
  encoder: { encode(text: string): Uint8Array },
  message: JSONRPCMessage,
  eventId?: string,
) => boolean;
interface WebStandardInside {
  writeSSEEvent?: WriteSseEvent;
  onerror?: (error: Error) => void;
}

/** Options of OffThreadSseTransport. */
export interface OffThreadSseTransportOptions {
  /** The SDK transport's own options. */
  transport: StreamableHTTPServerTransportOptions;
  /** Where large messages are encoded. */
  encodeThread: JsonEncodeThread;
  /** What encoding this session's large messages is charged to (its tenant's serverCpu share); default nothing. */
  budget?: WorkBudget | undefined;
}

/**
 * The MCP SDK's Streamable HTTP server transport, with large messages
 * (`read_file` of an image, a long output) encoded in a worker thread. The
 * SDK stringifies and UTF-8-encodes every message on the main thread as it
 * writes it to the SSE stream: for a 25 MB answer 0.3-0.8 s on a busy host,
 * in which the server answered nobody, so one tenant reading big files
 * stalled every other tenant's calls and `/healthz`. Here `send` first has
 * a large message encoded off the main thread, then hands it to the SDK,
 * whose SSE writer (replaced on this instance) writes those bytes instead
 * of encoding again: the same bytes on the wire, framed the same way.
 * Messages are sent in the order `send` was called: one sent after a large
 * one waits for it. Where the SDK's writer is not found (an SDK that
 * changed), or the thread could not encode a message, the SDK encodes it as
 * before.
 */
export class OffThreadSseTransport extends StreamableHTTPServerTransport {
  readonly #encodeThread: JsonEncodeThread;
  readonly #budget: WorkBudget | undefined;
  /** Each large message's bytes, from `send` to the SDK's write of it. */
  readonly #encoded = new WeakMap<JSONRPCMessage, Uint8Array>();
  /** The last large message still on its way: anything sent after it waits for it. */
  #sending: Promise<void> | undefined;
  /** Whether the SDK's SSE writer was found and replaced. */
  readonly encodesOffThread: boolean;

  constructor(options: OffThreadSseTransportOptions) {
    super(options.transport);
    this.#encodeThread = options.encodeThread;
    this.#budget = options.budget;
    const inside = (this as unknown as { _webStandardTransport?: WebStandardInside })._webStandardTransport;
    const write = inside?.writeSSEEvent;
    this.encodesOffThread = inside !== undefined && typeof write === 'function';
    if (!inside || !write) return;
    const encodeInline = write.bind(inside);
    inside.writeSSEEvent = (controller, encoder, message, eventId) => {
      const bytes = this.#encoded.get(message);
      if (!bytes) return encodeInline(controller, encoder, message, eventId);
      this.#encoded.delete(message);
      try {
        controller.enqueue(encoder.encode(`event: message\n${eventId ? `id: ${eventId}\n` : ''}data: `));
        controller.enqueue(bytes);
        controller.enqueue(encoder.encode('\n\n'));
        return true;
      } catch (error) {
        inside.onerror?.(error as Error);
        return false;
      }
    };
  }

  override async send(message: JSONRPCMessage, options?: Parameters<StreamableHTTPServerTransport['send']>[1]): Promise<void> {
    const before = this.#sending;
    if (!this.encodesOffThread || !holdsAtLeastChars(message, OFF_THREAD_MIN_CHARS)) {
      if (before) await before;
      return super.send(message, options);
    }
    const sent = (async () => {
      const bytes = await this.#encodeThread.encode(message, { budget: this.#budget });
      if (before) await before;
      if (bytes) this.#encoded.set(message, bytes);
      await super.send(message, options);
    })();
    const settled = sent.then(
      () => undefined,
      () => undefined,
    );
    this.#sending = settled;
    void settled.then(() => {
      if (this.#sending === settled) this.#sending = undefined;
    });
    return sent;
  }
}
