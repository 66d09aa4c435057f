import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type CryptoKey } from 'jose';

export interface TestIssuer {
  /** `http://127.0.0.1:PORT`, also the `iss` of its tokens. */
  readonly issuer: string;
  /** Requests for the discovery document and the JWKS, so far. */
  readonly requests: string[];
  /** A token signed with the published key; `claims` override the defaults (iss, sub, aud, iat, exp in 5 minutes). */
  sign(claims?: JWTPayload, options?: { key?: CryptoKey; alg?: string; kid?: string }): Promise<string>;
  /** A key pair the JWKS does not publish, to sign forgeries with. */
  readonly otherKey: CryptoKey;
  /** Makes the JWKS endpoint answer this status with an empty body (an outage); undefined: serve the keys again. */
  failJwks(status: number | undefined): void;
  /** The same for the discovery document. */
  failDiscovery(status: number | undefined): void;
  /** How many requests asked for `path` so far (`/jwks`, `/.well-known/openid-configuration`). */
  count(path: string): number;
  close(): Promise<void>;
}

/**
 * A real OpenID issuer over node:http for tests: the discovery document at
 * `/.well-known/openid-configuration` and the JWKS at `/jwks`, one ES256 key
 * made with jose's generateKeyPair.
 */
export async function startTestIssuer(audience: string): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const other = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'key-1', alg: 'ES256', use: 'sig' };
  const requests: string[] = [];
  let issuer = '';
  let jwksStatus: number | undefined;
  let discoveryStatus: number | undefined;
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/.well-known/openid-configuration' && discoveryStatus !== undefined) {
      res.writeHead(discoveryStatus).end();
    } else if (req.url === '/.well-known/openid-configuration') {
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, id_token_signing_alg_values_supported: ['ES256'] }));
    } else if (req.url === '/jwks' && jwksStatus !== undefined) {
      res.writeHead(jwksStatus).end();
    } else if (req.url === '/jwks') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    requests,
    otherKey: other.privateKey,
    failJwks(status) {
      jwksStatus = status;
    },
    failDiscovery(status) {
      discoveryStatus = status;
    },
    count: (path) => requests.filter((url) => url === path).length,
    async sign(claims = {}, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, sub: 'alice', aud: audience, iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: options.kid ?? 'key-1', typ: 'at+jwt' })
        .sign(options.key ?? privateKey);
    },
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
