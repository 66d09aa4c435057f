import { chown, mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The uid and gid that own a benchmark's workspace: an ordinary user's, so commands run as it on runc and gVisor alike (gVisor refuses uid 0's). */
export const BENCH_USER = 10001;

/** A fresh temporary folder owned by BENCH_USER; the caller removes it. */
export async function userWorkspace(prefix: string): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  await chown(dir, BENCH_USER, BENCH_USER);
  return dir;
}
