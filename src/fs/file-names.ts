const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A file name as text, and whether the raw bytes were valid UTF-8. */
export interface DecodedFileName {
  /** The name; invalid bytes are shown as U+FFFD when `valid` is false. */
  text: string;
  valid: boolean;
}

/**
 * Decodes raw file-name bytes. Linux allows any bytes but `/` and NUL in a
 * name; one that is not UTF-8 cannot be named by a JSON string, so tools show
 * it lossily and must use the bytes to open it.
 */
export function decodeFileName(name: Buffer): DecodedFileName {
  let decoded: DecodedFileName;
  try {
    decoded = { text: strictUtf8.decode(name), valid: true };
  } catch {
    decoded = { text: name.toString('utf8'), valid: false };
  }
  // A name with control characters (e.g. a planted `\x1b]52;…` file) would carry terminal escapes
  // into model text and people's terminals: show it escaped, and treat it like a non-UTF-8 name.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(decoded.text)) {
    // eslint-disable-next-line no-control-regex
    return { text: decoded.text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`), valid: false };
  }
  return decoded;
}

/** Joins a directory path and a raw name, staying a string while every part is valid UTF-8. */
export function joinRawPath(directory: string | Buffer, name: Buffer, nameIsValid: boolean): string | Buffer {
  if (typeof directory === 'string' && nameIsValid) {
    return directory.endsWith('/') ? directory + name.toString('utf8') : `${directory}/${name.toString('utf8')}`;
  }
  const dirBytes = typeof directory === 'string' ? Buffer.from(directory) : directory;
  const separator = dirBytes[dirBytes.length - 1] === 0x2f ? Buffer.alloc(0) : Buffer.from('/');
  return Buffer.concat([dirBytes, separator, name]);
}
