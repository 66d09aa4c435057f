import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * Makes a connected client handle what its server sent in the order sent.
 *
 * The MCP SDK (1.32; typescript-sdk issue 2580) hands a notification to its
 * handler one microtask after it arrives but a response at once. When a
 * call's last progress notifications and its result come in one read, which
 * is what a loaded host does, the result retires the call's progress handler
 * first and those notifications are dropped as "unknown token": the live
 * output missed its last steps exactly when the machine was busy. Each
 * response is therefore handed on one microtask later, queued behind the
 * notifications read before it.
 *
 * Call it after `Client.connect`, which installs the handler it wraps.
 */
export function deliverInSentOrder(transport: Transport): void {
  const handle = transport.onmessage;
  if (!handle) return;
  transport.onmessage = (message, extra) => {
    if (!isResponse(message)) {
      handle.call(transport, message, extra);
      return;
    }
    queueMicrotask(() => {
      try {
        handle.call(transport, message, extra);
      } catch (error) {
        // Thrown in a microtask it would end the process; the transport's error handler is where it was going.
        transport.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    });
  };
}

/** A JSON-RPC response (result or error) has an id and no method. */
function isResponse(message: object): boolean {
  return 'id' in message && !('method' in message);
}
