import type { IncomingMessage } from 'node:http';
import { ToolcellError, ToolErrorType } from '../../errors.js';

/** The body limit of hosting endpoints unless a caller says otherwise: an MCP request is a few KB. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Reads a request body of at most `maxBytes`. A `Content-Length` over the
 * limit is refused before a byte is read; a body that grows past it (chunked,
 * or lying about its length) is refused as soon as it does, and the rest is
 * not read. Either way it throws `request_too_large`: answer 413 and close
 * the connection (`Connection: close`), since the client may still be sending.
 */
export function readBody(req: IncomingMessage, maxBytes = DEFAULT_MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
  // Events rather than `for await`: leaving an async iterator early destroys
  // the request and with it the socket, and the 413 would never be sent.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      cleanUp();
      req.resume(); // the rest is read and dropped until the 413 (Connection: close) ends the connection
      reject(tooLarge(maxBytes));
    };
    const onEnd = (): void => {
      cleanUp();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error): void => {
      cleanUp();
      reject(error);
    };
    const cleanUp = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** `readBody`, parsed as JSON; a body that is not JSON throws `invalid_input`. */
export async function readJsonBody(req: IncomingMessage, maxBytes = DEFAULT_MAX_BODY_BYTES): Promise<unknown> {
  const body = await readBody(req, maxBytes);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, 'The request body is not JSON');
  }
}

function tooLarge(maxBytes: number): ToolcellError {
  return new ToolcellError(ToolErrorType.REQUEST_TOO_LARGE, `The request body is over the limit of ${maxBytes} bytes`);
}
