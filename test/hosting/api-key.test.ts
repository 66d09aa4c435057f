import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { ApiKeyAuthenticator, apiKeyId, generateApiKey, hashApiKey, type StoredKey } from '../../src/hosting/auth/api-key.js';

const request = {} as IncomingMessage;

function directory(entries: Record<string, StoredKey>) {
  return new ApiKeyAuthenticator({ findKey: (id) => entries[id] });
}

test('a key carries its id and at least 32 random bytes in base64url', (t) => {
  const key = generateApiKey();
  t.regex(key.key, /^tc_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
  t.is(apiKeyId(key.key), key.id);
  t.is(Buffer.from(key.key.slice(16), 'base64url').length, 32);
  t.is(key.hash, hashApiKey(key.key));
  t.false(key.hash.includes(key.key.slice(16)));
  t.not(generateApiKey().key, key.key);
});

test('the right key authenticates its tenant with the key id as subject', async (t) => {
  const key = generateApiKey();
  const auth = directory({ [key.id]: { tenant: 'acme', hash: key.hash, revoked: false } });
  t.true(auth.recognises(key.key));
  t.deepEqual(await auth.authenticate(key.key, request), { ok: true, principal: { tenant: 'acme', subject: key.id, via: 'api_key', keyId: key.id } });
});

test('a wrong secret, an unknown id, a revoked key and a malformed key are refused', async (t) => {
  const key = generateApiKey();
  const revoked = generateApiKey();
  const auth = directory({
    [key.id]: { tenant: 'acme', hash: key.hash, revoked: false },
    [revoked.id]: { tenant: 'acme', hash: revoked.hash, revoked: true },
  });
  const forged = `${key.key.slice(0, 16)}${generateApiKey().key.slice(16)}`;
  t.deepEqual(await auth.authenticate(forged, request), { ok: false, reason: 'unknown_key' });
  t.deepEqual(await auth.authenticate(generateApiKey().key, request), { ok: false, reason: 'unknown_key' });
  t.deepEqual(await auth.authenticate(revoked.key, request), { ok: false, reason: 'revoked_key' });
  t.deepEqual(await auth.authenticate('tc_short', request), { ok: false, reason: 'malformed_credentials' });
  t.false(auth.recognises('eyJhbGciOi.x.y'));
});
