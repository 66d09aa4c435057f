import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Server as HttpsServer } from 'node:https';
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { ToolcellError, ToolErrorType, errorMessage } from '../../errors.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface TlsPairCheck {
  /**
   * The host name (or IP address) clients reach the server by, when the
   * server knows it (`--public-url`): the certificate's subjectAltName must
   * name it, as browsers and Node's TLS client require (the CN is not read).
   */
  hostname?: string;
  /** The clock of the validity check; default now. */
  now?: () => Date;
}

/** A certificate and key that were read and checked together. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** One line for the log: the certificate's subject, names and end of validity. */
  summary: string;
}

/**
 * Reads the certificate (the leaf first, then its chain) and the key, and
 * checks that they can serve: they make a pair (a secure context is built
 * from them), the leaf is valid now (notBefore ≤ now ≤ notAfter), and it
 * names `check.hostname` when given. Throws `invalid_input` saying which
 * check failed and why.
 */
export async function readTlsPair(files: TlsFiles, check: TlsPairCheck = {}): Promise<TlsPair> {
  const [cert, key] = await Promise.all([read(files.certFile, 'certificate'), read(files.keyFile, 'key')]);
  try {
    createSecureContext({ cert, key, minVersion: 'TLSv1.2' });
  } catch (error) {
    throw invalid(`The TLS certificate ${files.certFile} and key ${files.keyFile} do not make a pair: ${errorMessage(error)}`, error);
  }
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (error) {
    throw invalid(`The TLS certificate ${files.certFile} cannot be read as X.509: ${errorMessage(error)}`, error);
  }
  const now = (check.now ?? (() => new Date()))();
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  if (now < notBefore) throw invalid(`The TLS certificate ${files.certFile} is not valid yet: from ${notBefore.toISOString()} (now ${now.toISOString()})`);
  if (now > notAfter) throw invalid(`The TLS certificate ${files.certFile} expired at ${notAfter.toISOString()} (now ${now.toISOString()})`);
  const names = leaf.subjectAltName ?? 'no subjectAltName';
  if (check.hostname !== undefined) {
    const named = isIP(check.hostname) !== 0 ? leaf.checkIP(check.hostname) : leaf.checkHost(check.hostname, { subject: 'never' });
    if (named === undefined) throw invalid(`The TLS certificate ${files.certFile} does not name ${check.hostname}, the server's public host: it has ${names}`);
  }
  return { cert, key, summary: `${leaf.subject.replace(/\n/g, ', ')}; ${names}; valid until ${notAfter.toISOString()}` };
}

/**
 * Reads the certificate and key again and makes them the server's for new
 * connections (`setSecureContext`; open connections keep theirs), once
 * `readTlsPair` found they can serve. Otherwise it throws `invalid_input`
 * and the server keeps serving the old pair. Resolves with the new pair's summary.
 */
export async function reloadTls(server: HttpsServer, files: TlsFiles, check: TlsPairCheck = {}): Promise<string> {
  const pair = await readTlsPair(files, check);
  server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' });
  return pair.summary;
}

function invalid(message: string, cause?: unknown): ToolcellError {
  return new ToolcellError(ToolErrorType.INVALID_INPUT, message, cause === undefined ? undefined : { cause });
}

async function read(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw invalid(`Cannot read the TLS ${what} ${path}: ${errorMessage(error)}`, error);
  }
}
