import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Options of `resetStalledWrites`. */
export interface StalledWritesOptions {
  /** The window over which a client with output waiting must take at least MIN_READ_BYTES_PER_SECOND of it. */
  stallMs: number;
  /** How often the connections are looked at; a reset lands within this after a window ends. */
  checkIntervalMs: number;
}

/** The slowest a client may take waiting output: a trickle of bytes does not hold a connection and its memory. */
export const MIN_READ_BYTES_PER_SECOND = 16 * 1024;

/** A connection's output that waits in the server: since when, and how much had been handed to the kernel then. */
interface Waiting {
  since: number;
  taken: number;
}

/**
 * Resets every connection whose client has stopped taking what the server
 * writes to it. The kernel takes a few MB of a response; the rest waits in
 * the server's memory for the client to read, and a client that never reads
 * kept that memory and the socket's descriptor for good (no Node timeout
 * covers a response being written): 16 unread answers to `read_file` of a
 * 19 MB image held 687 MB of the server's memory. While output waits, the
 * client must take at least MIN_READ_BYTES_PER_SECOND of it over each
 * `stallMs`, or the connection is reset: a reset frees the kernel's buffers
 * too, where a close would leave them trying to deliver. The queue emptying
 * at any moment starts a new window.
 */
export function resetStalledWrites(server: Server, options: StalledWritesOptions): void {
  const { stallMs, checkIntervalMs } = options;
  const minimum = Math.ceil((stallMs / 1000) * MIN_READ_BYTES_PER_SECOND);
  const watched = new Map<Socket, Waiting | undefined>();
  const watch = (socket: Socket): void => {
    if (watched.has(socket) || socket.destroyed) return;
    watched.set(socket, undefined);
    // Emptied between two looks: the client took all of it.
    socket.on('drain', () => {
      if (watched.has(socket)) watched.set(socket, undefined);
    });
    socket.once('close', () => watched.delete(socket));
  };
  // The socket a response is written to: over TLS the TLS socket, whose queue is the clear text waiting.
  server.on('request', (req: { socket: Socket }) => watch(req.socket));
  const timer = setInterval(() => {
    const now = Date.now();
    for (const [socket, waiting] of watched) {
      const output = outputOf(socket);
      if (output.waiting === 0) watched.set(socket, undefined);
      else if (waiting === undefined) watched.set(socket, { since: now, taken: output.taken });
      else if (now - waiting.since < stallMs) continue;
      else if (output.taken - waiting.taken >= minimum) watched.set(socket, { since: now, taken: output.taken });
      else reset(socket);
    }
  }, checkIntervalMs).unref();
  server.once('close', () => clearInterval(timer));
}

/** Node's TCP handle, as far as it is read here. */
interface TcpHandle {
  bytesWritten?: unknown;
  writeQueueSize?: unknown;
}

/**
 * How much of a connection's output waits, and how much the kernel has taken
 * so far. From the TCP handle (over TLS the parent socket's), whose figures
 * move while a large write is under way: the socket's own `writableLength`
 * counts one write as waiting, whole, until the last of it is taken, and a
 * response's 27 MB are one write.
 */
export function outputOf(socket: Socket): { waiting: number; taken: number } {
  const tcp = ((socket as Socket & { _parent?: Socket })._parent ?? socket) as Socket & { _handle?: TcpHandle | null };
  const handle = tcp._handle;
  if (typeof handle?.bytesWritten === 'number' && typeof handle.writeQueueSize === 'number')
    return { waiting: Math.max(socket.writableLength, handle.writeQueueSize), taken: handle.bytesWritten - handle.writeQueueSize };
  return { waiting: socket.writableLength, taken: socket.bytesWritten - socket.writableLength };
}

/** A TCP reset where the socket has its own TCP handle (RST: the kernel drops what it still held); a plain close over TLS. */
function reset(socket: Socket): void {
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}
