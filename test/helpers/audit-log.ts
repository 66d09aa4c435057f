import { readFile } from 'node:fs/promises';

/**
 * The whole lines of an audit log, parsed. A last line without its newline
 * (a writer killed mid-write) is left out; any other line that does not
 * parse throws, naming its number.
 */
export async function readAuditLines(path: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path, 'utf8');
  const lines = text.split('\n');
  lines.pop(); // '' after the last newline, or the torn tail of a killed writer
  return lines.map((line, index) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`${path}: line ${index + 1} is not JSON: ${line.slice(0, 80)}`);
    }
  });
}
