import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/** The absolute path of `name` on PATH, or null. Looked up at call time, never at import. */
export async function findExecutable(name: string, path = process.env['PATH'] ?? ''): Promise<string | null> {
  for (const directory of path.split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
