import { readFile } from 'node:fs/promises';
import type { Server as HttpsServer } from 'node:https';
import { createSecureContext } from 'node:tls';
import { ToolcellError, ToolErrorType, errorMessage } from '../../errors.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/**
 * Reads the certificate and key again and makes them the server's for new
 * connections (`setSecureContext`; open connections keep theirs). Both are
 * checked together first (a secure context is built from them), so an
 * unreadable file, a bad PEM or a key that does not match the certificate
 * throws `invalid_input` and the server keeps serving the old pair.
 */
export async function reloadTls(server: HttpsServer, files: TlsFiles): Promise<void> {
  const [cert, key] = await Promise.all([read(files.certFile, 'certificate'), read(files.keyFile, 'key')]);
  try {
    createSecureContext({ cert, key, minVersion: 'TLSv1.2' });
  } catch (error) {
    const problem = `The TLS certificate ${files.certFile} and key ${files.keyFile} do not make a pair: ${errorMessage(error)}`;
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, problem, { cause: error });
  }
  server.setSecureContext({ cert, key, minVersion: 'TLSv1.2' });
}

async function read(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, `Cannot read the TLS ${what} ${path}: ${errorMessage(error)}`, { cause: error });
  }
}
