import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolErrorType, ToolcellError } from '../errors.js';

/** The key file's name under a hosting server's data directory. */
export const SECRETS_KEY_FILE = 'secrets.key';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;

function unavailable(message: string, cause?: unknown): ToolcellError {
  return new ToolcellError(ToolErrorType.SECRET_UNAVAILABLE, message, cause === undefined ? undefined : { cause });
}

/**
 * Seals tenants' secret values for the tenants file, and opens them again:
 * AES-256-GCM with a random 96-bit nonce per value and the tenant's and the
 * secret's names as associated data, so a sealed value moved to another
 * tenant or name does not open. The key is 32 random bytes in
 * `<data-dir>/secrets.key` (mode 0600, refused when others can read it),
 * kept apart from the tenants file: the file alone, a backup or a copy
 * shown in a ticket reveals no value. Whoever can read the key file and the
 * tenants file can read every secret (root on the server can anyway).
 */
export class SecretBox {
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    this.#key = key;
  }

  /** The data dir's key; `create` makes one (atomically, never replacing another's) when there is none. */
  static async open(dataDir: string, options: { create?: boolean } = {}): Promise<SecretBox> {
    const path = join(dataDir, SECRETS_KEY_FILE);
    let text: string;
    try {
      const info = await stat(path);
      if ((info.mode & 0o077) !== 0)
        throw unavailable(`The secrets key ${path} can be read by others (mode ${(info.mode & 0o777).toString(8)}); chmod 600 it.`);
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw error instanceof ToolcellError ? error : unavailable(`Cannot read the secrets key ${path}: ${(error as Error).message}`, error);
      if (!options.create) throw unavailable(`There is no secrets key ${path}: set the secrets again with toolcell tenant secret set --data-dir ${dataDir}.`);
      const created = await createKey(dataDir, path);
      // Another process made one first: that one is the key.
      return created ? new SecretBox(created) : SecretBox.open(dataDir);
    }
    const key = /^[0-9a-f]{64}\n?$/.test(text) ? Buffer.from(text.trim(), 'hex') : undefined;
    if (!key || key.length !== KEY_BYTES) throw unavailable(`The secrets key ${path} is not 64 hex digits.`);
    return new SecretBox(key);
  }

  seal(tenant: string, name: string, value: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(associatedData(tenant, name));
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The value, or `secret_unavailable` naming the secret (never what it holds). */
  open(tenant: string, name: string, sealed: string): string {
    const [version, iv, data] = sealed.split('.');
    try {
      if (version !== VERSION || !iv || !data) throw new Error('not a sealed value of this version');
      const bytes = Buffer.from(data, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(associatedData(tenant, name));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
    } catch (error) {
      throw unavailable(
        `Secret ${name} of tenant ${tenant} does not open with this server's secrets key (set it again with toolcell tenant secret set).`,
        error,
      );
    }
  }
}

function associatedData(tenant: string, name: string): Buffer {
  return Buffer.from(`toolcell tenant secret ${VERSION}\0${tenant}\0${name}`, 'utf8');
}

/** A new key, linked into place only if none exists (two `secret set` at once agree on one key); undefined when another was there. */
async function createKey(dataDir: string, path: string): Promise<Buffer | undefined> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temp, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(temp, path);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return undefined;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
