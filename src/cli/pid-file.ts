import { readFile, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.js';

/** A pid file this process wrote; `remove` deletes it if it still names this process. */
export interface PidFile {
  readonly path: string;
  remove(): Promise<void>;
}

/**
 * Writes this process's pid to `path` (one line, mode 0644), atomically, so
 * that `kill -HUP "$(cat FILE)"` (a logrotate postrotate, a service manager)
 * never reads half a number. Written once the server listens; removed when it
 * stops, unless another process has written its own pid there since.
 */
export async function writePidFile(path: string): Promise<PidFile> {
  const folder = dirname(path);
  const workspace = { roots: [folder], stateDir: join(folder, '.toolcell') };
  await writeFileAtomic(workspace, join(folder, basename(path)), `${process.pid}\n`, { mode: 0o644 });
  return {
    path,
    async remove() {
      const content = await readFile(path, 'utf8').catch(() => '');
      if (content.trim() === String(process.pid)) await unlink(path).catch(() => undefined);
    },
  };
}
