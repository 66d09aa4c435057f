/** How a text file's bytes were encoded; edits write it back the same way. */
export type TextEncodingName = 'utf8' | 'utf8-bom' | 'utf16le' | 'utf16be';

export interface DecodedText {
  text: string;
  encoding: TextEncodingName;
}

/**
 * Decodes file bytes as text by their byte order mark: UTF-8 with or without
 * BOM, or UTF-16 LE/BE. The BOM is not part of `text`. Invalid UTF-8 bytes
 * become U+FFFD (such a file should have been found binary first).
 */
export function decodeText(bytes: Uint8Array): DecodedText {
  const [b0, b1, b2] = bytes;
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) {
    return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes.subarray(3)), encoding: 'utf8-bom' };
  }
  if (b0 === 0xff && b1 === 0xfe) return { text: new TextDecoder('utf-16le').decode(bytes.subarray(2)), encoding: 'utf16le' };
  if (b0 === 0xfe && b1 === 0xff) return { text: new TextDecoder('utf-16be').decode(bytes.subarray(2)), encoding: 'utf16be' };
  return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes), encoding: 'utf8' };
}

/** Encodes text as `encoding`, with the BOM that encoding implies. */
export function encodeText(text: string, encoding: TextEncodingName): Buffer {
  switch (encoding) {
    case 'utf8':
      return Buffer.from(text, 'utf8');
    case 'utf8-bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    case 'utf16le':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    case 'utf16be': {
      const body = Buffer.from(text, 'utf16le');
      body.swap16();
      return Buffer.concat([Buffer.from([0xfe, 0xff]), body]);
    }
  }
}
