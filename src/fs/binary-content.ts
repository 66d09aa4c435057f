/** Bytes examined to decide whether content is binary (the first 4096, as Gemini CLI's isBinaryFile reads). */
export const BINARY_SNIFF_BYTES = 4096;

/** Share of control characters above which a sample counts as binary. */
const MAX_CONTROL_RATIO = 0.3;

/**
 * True when the start of `bytes` looks like binary data rather than text: it
 * holds a NUL byte, or more than 30% control characters. Text with a UTF-16
 * or UTF-32 byte order mark counts as text; bytes >= 0x80 (UTF-8, Latin-1)
 * never count against it.
 */
export function looksBinary(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, BINARY_SNIFF_BYTES);
  if (sample.length === 0) return false;
  if (hasUtf16Or32Bom(sample)) return false;
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    if (byte < 32 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12 && byte !== 8 && byte !== 27) control += 1;
  }
  return control / sample.length > MAX_CONTROL_RATIO;
}

function hasUtf16Or32Bom(bytes: Uint8Array): boolean {
  const [b0, b1] = bytes;
  return (b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff);
}
