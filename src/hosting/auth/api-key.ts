import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AuthOutcome, Authenticator } from './principal.js';

/**
 * Tenant API keys: `tc_<id>_<secret>`. The id (12 characters of a-z 0-9)
 * is public and finds the stored entry; the secret is 32 random bytes in
 * base64url (43 characters). The prefix makes a leaked key easy to
 * recognise (secret scanners, logs). Only SHA-256 of the whole key is
 * stored: the secret has 256 bits of entropy, so a slow hash would add
 * nothing but latency to every request.
 */
const KEY_PATTERN = /^tc_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface NewApiKey {
  id: string;
  /** The key to hand to the client, once. */
  key: string;
  /** What the tenants file stores. */
  hash: string;
}

export function generateApiKey(): NewApiKey {
  const id = Array.from(randomBytes(12), (byte) => ID_ALPHABET[byte % ID_ALPHABET.length]).join('');
  const key = `tc_${id}_${randomBytes(32).toString('base64url')}`;
  return { id, key, hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The key id of a well-formed key, else undefined. */
export function apiKeyId(bearer: string): string | undefined {
  return KEY_PATTERN.exec(bearer)?.[1];
}

/** What the authenticator needs to know about a key id: from the tenant store's current state. */
export interface StoredKey {
  tenant: string;
  hash: string;
  revoked: boolean;
}

export interface KeyDirectory {
  findKey(id: string): StoredKey | undefined;
}

/** Compared against when the id is unknown, so that an unknown id costs what a wrong secret does. */
const DUMMY_HASH = Buffer.alloc(32);

/**
 * Authenticates `Bearer tc_…` keys against the tenants file's hashes, in
 * constant time (timingSafeEqual of the two digests). The principal's
 * subject is the key id, so a session stays bound to the key that opened it.
 */
export class ApiKeyAuthenticator implements Authenticator {
  readonly #keys: KeyDirectory;

  constructor(keys: KeyDirectory) {
    this.#keys = keys;
  }

  recognises(bearer: string): boolean {
    return bearer.startsWith('tc_');
  }

  async authenticate(bearer: string, _request: IncomingMessage): Promise<AuthOutcome> {
    const id = apiKeyId(bearer);
    if (id === undefined) return { ok: false, reason: 'malformed_credentials' };
    const stored = this.#keys.findKey(id);
    const given = createHash('sha256').update(bearer, 'utf8').digest();
    const expected = stored ? Buffer.from(stored.hash, 'hex') : DUMMY_HASH;
    const match = timingSafeEqual(given, expected) && stored !== undefined;
    if (!match) return { ok: false, reason: 'unknown_key' };
    if (stored.revoked) return { ok: false, reason: 'revoked_key' };
    return { ok: true, principal: { tenant: stored.tenant, subject: id, via: 'api_key', keyId: id } };
  }
}
