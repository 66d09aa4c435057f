import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { ToolcellError, ToolErrorType, errorMessage } from '../../errors.js';

/**
 * What an admin key must be: at least 32 printable ASCII characters without
 * spaces (e.g. `openssl rand -hex 32`), and not shaped like a tenant's API
 * key (`tc_…`), so neither can be mistaken for the other.
 */
export function adminKeyProblem(key: string): string | undefined {
  if (!/^[\x21-\x7e]{32,}$/.test(key)) return 'must be at least 32 printable characters without spaces (e.g. `openssl rand -hex 32`)';
  if (key.startsWith('tc_')) return 'must not look like a tenant API key (tc_…): the admin key is never a tenant key';
  return undefined;
}

/**
 * Reads the admin key from its file (`--admin-key-file`): the first line,
 * trimmed. The file must not be readable by group or others, as ssh asks of
 * a private key. Throws `invalid_input` naming the file and the problem.
 */
export async function readAdminKeyFile(path: string): Promise<string> {
  let text: string;
  try {
    const info = await stat(path);
    if ((info.mode & 0o077) !== 0) throw new Error(`it is readable by others (mode ${(info.mode & 0o777).toString(8)}); run chmod 600 on it`);
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ToolcellError(ToolErrorType.INVALID_INPUT, `Cannot use the admin key file ${path}: ${errorMessage(error)}`, { cause: error });
  }
  const key = (text.split('\n')[0] ?? '').trim();
  const problem = adminKeyProblem(key);
  if (problem) throw new ToolcellError(ToolErrorType.INVALID_INPUT, `The admin key in ${path} ${problem}`);
  return key;
}

/**
 * A constant-time check of a presented key against the admin key: both are
 * hashed first, so the comparison takes the same time whatever their
 * lengths and contents.
 */
export function adminKeyMatcher(adminKey: string): (presented: string) => boolean {
  const expected = digest(adminKey);
  return (presented) => timingSafeEqual(digest(presented), expected);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
