/** Encoded forms shorter than this are not looked for: they would match ordinary output. */
export const MIN_VARIANT_CHARS = 8;

/** Base64 of `bytes` after `offset` other bytes: only the characters every neighbour leaves the same. */
function base64Middle(bytes: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  const start = Math.ceil((offset * 4) / 3);
  const end = Math.floor(((offset + bytes.length) * 4) / 3);
  return encoded.slice(start, end);
}

/**
 * The forms of a secret value a command may print, each redacted like the
 * value itself: the value; each line of a value of several lines (a PEM
 * key, wrapped by a terminal); its JSON string escape (`jq`, `JSON.stringify`);
 * its URL encoding (curl, logs of requests); its base64, standard and URL-safe,
 * at each of the three alignments it can have inside a longer base64 text
 * (`echo $T | base64`, Basic auth headers, `docker login` config); its hex,
 * lower and upper case (`xxd -p`, `od`). Other transformations (reversed,
 * split, re-encoded twice, compressed) are not recognised: see SECURITY.md.
 */
export function secretVariants(value: string): string[] {
  const variants = new Set<string>([value]);
  const lines = value.split(/\r?\n/).filter((line) => line.length >= MIN_VARIANT_CHARS);
  if (lines.length > 1) for (const line of lines) variants.add(line);
  for (const text of lines.length > 1 ? [value, ...lines] : [value]) {
    const bytes = Buffer.from(text, 'utf8');
    variants.add(JSON.stringify(text).slice(1, -1));
    variants.add(encodeURIComponent(text));
    for (let offset = 0; offset < 3; offset++) {
      const middle = base64Middle(bytes, offset);
      variants.add(middle);
      variants.add(middle.replace(/\+/g, '-').replace(/\//g, '_'));
    }
    variants.add(bytes.toString('hex'));
    variants.add(bytes.toString('hex').toUpperCase());
  }
  return [...variants].filter((variant) => variant === value || variant.length >= MIN_VARIANT_CHARS);
}
