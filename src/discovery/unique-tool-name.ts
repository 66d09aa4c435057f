import { toGeminiFunctionName } from '../tools/names.js';

/**
 * A valid Gemini function name for `raw` (sanitised and shortened by
 * `toGeminiFunctionName`) that is not in `taken`: on a collision a `_2`,
 * `_3`, … suffix is added, shortening the name further if needed. The
 * chosen name is added to `taken`.
 */
export function uniqueToolName(raw: string, taken: Set<string>): string {
  const base = toGeminiFunctionName(raw);
  let name = base;
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = `${base.slice(0, 64 - suffix.length)}${suffix}`;
  }
  taken.add(name);
  return name;
}
