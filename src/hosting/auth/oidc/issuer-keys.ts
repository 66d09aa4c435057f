import { createLocalJWKSet, errors as joseErrors, type FlattenedJWSInput, type JWSHeaderParameters, type JWTVerifyGetKey } from 'jose';
import { errorMessage } from '../../../errors.js';
import { discoverJwksUri, fetchIssuerJson } from './discovery.js';

type KeySet = ReturnType<typeof createLocalJWKSet>;

/** Thrown by the key lookup when the issuer's keys cannot be had now: a token is then refused as `issuer_unreachable`. */
export class IssuerUnreachableError extends Error {}

export interface IssuerKeysOptions {
  issuer: string;
  /** One discovery or JWKS request gives up after this. */
  timeoutMs: number;
  /** After a successful fetch, a token naming a key the set lacks fetches it again at most this often (jose's default, 30 s). */
  cooldownMs?: number;
  /** Keys older than this are fetched again before use (jose's default, 10 minutes). */
  maxAgeMs?: number;
  /** After a failed fetch, none for this long; doubled with each failure in a row. Default 5 s. */
  retryAfterMs?: number;
  /** The longest wait between two attempts while the issuer fails. Default 5 minutes. */
  maxRetryAfterMs?: number;
  /** Told once when the issuer stops answering and once when it answers again, never per token. */
  onLog?: (message: string) => void;
}

interface Fetched {
  keys: KeySet;
  at: number;
}

interface Failure {
  error: IssuerUnreachableError;
  /** No fetch before this (Date.now()). */
  retryAt: number;
  /** Failed attempts in a row. */
  attempts: number;
  since: number;
}

/**
 * An issuer's signing keys for token checks, found through its discovery
 * document. Every request to the issuer is one a client can provoke (a token
 * with an unknown `kid` asks for a refetch), so the number of requests is
 * bounded whatever the clients send and however the issuer answers:
 * - one fetch at a time, shared by every token that waits for it;
 * - after a success, a refetch for an unknown `kid` at most every cooldown;
 * - after a failure, the failure is the answer until a backoff has passed
 *   (5 s, doubling up to 5 minutes while the issuer keeps failing), so a
 *   struggling issuer gets no more requests from bogus tokens than from none.
 * Keys in hand keep verifying tokens during an outage until they are older
 * than the maximum age. The outage is logged when it starts and when it ends.
 */
export class IssuerKeys {
  readonly #options: Required<Omit<IssuerKeysOptions, 'onLog'>> & Pick<IssuerKeysOptions, 'onLog'>;
  #jwksUri: URL | undefined;
  #fetched: Fetched | undefined;
  #pending: Promise<Fetched> | undefined;
  #failure: Failure | undefined;
  /** Requests sent to the issuer so far (discovery and JWKS), for tests and metrics. */
  #requests = 0;

  constructor(options: IssuerKeysOptions) {
    this.#options = { cooldownMs: 30_000, maxAgeMs: 600_000, retryAfterMs: 5_000, maxRetryAfterMs: 300_000, ...options };
  }

  get requests(): number {
    return this.#requests;
  }

  /** The key lookup for jose's jwtVerify; throws IssuerUnreachableError when the keys cannot be had now. */
  readonly getKey: JWTVerifyGetKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    let fetched = this.#fetched;
    if (!fetched || Date.now() - fetched.at >= this.#options.maxAgeMs) fetched = await this.refresh();
    try {
      return await fetched.keys(header, token);
    } catch (error) {
      // The issuer may have rotated its keys: ask again, but not more often than the cooldown.
      if (!(error instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - fetched.at < this.#options.cooldownMs) throw error;
      fetched = await this.refresh();
      return fetched.keys(header, token);
    }
  };

  /**
   * Reads the discovery document now, at start-up, to fail early on a wrong
   * issuer URL; the keys are fetched when the first token needs them.
   * Throws `oidc_discovery_failed`.
   */
  async discover(): Promise<void> {
    if (this.#jwksUri) return;
    this.#requests++;
    this.#jwksUri = await discoverJwksUri(this.#options.issuer, this.#options.timeoutMs);
  }

  /**
   * Fetches the keys now, or joins the fetch under way, or, within the
   * backoff after a failure, rejects with that failure without asking.
   */
  refresh(): Promise<Fetched> {
    if (this.#pending) return this.#pending;
    const failure = this.#failure;
    if (failure && Date.now() < failure.retryAt) return Promise.reject(failure.error);
    const pending = this.#fetch().then(
      (fetched) => this.#succeeded(fetched),
      (error: unknown) => this.#failed(error),
    );
    this.#pending = pending;
    void pending.catch(() => {}).finally(() => (this.#pending = undefined));
    return pending;
  }

  async #fetch(): Promise<Fetched> {
    await this.discover();
    const jwksUri = this.#jwksUri!;
    this.#requests++;
    let body: unknown;
    try {
      body = await fetchIssuerJson(jwksUri, this.#options.timeoutMs);
    } catch (error) {
      throw new Error(`Cannot read the key set ${jwksUri.href}: ${describe(error)}`, { cause: error });
    }
    try {
      return { keys: createLocalJWKSet(body as Parameters<typeof createLocalJWKSet>[0]), at: Date.now() };
    } catch (error) {
      throw new Error(`${jwksUri.href} is not a JSON Web Key Set: ${errorMessage(error)}`, { cause: error });
    }
  }

  #succeeded(fetched: Fetched): Fetched {
    const failure = this.#failure;
    this.#failure = undefined;
    this.#fetched = fetched;
    if (failure) {
      const seconds = Math.round((Date.now() - failure.since) / 1000);
      this.#options.onLog?.(`OIDC: the issuer ${this.#options.issuer} answers again (after ${failure.attempts} failed attempt(s) over ${seconds} s)`);
    }
    return fetched;
  }

  #failed(cause: unknown): never {
    const now = Date.now();
    const previous = this.#failure;
    const attempts = (previous?.attempts ?? 0) + 1;
    const wait = Math.min(this.#options.retryAfterMs * 2 ** (attempts - 1), this.#options.maxRetryAfterMs);
    const error = new IssuerUnreachableError(describe(cause), { cause });
    this.#failure = { error, retryAt: now + wait, attempts, since: previous?.since ?? now };
    if (!previous) {
      this.#options.onLog?.(
        `OIDC: cannot reach the issuer ${this.#options.issuer}: ${describe(cause)}; tokens that need its keys are refused ` +
          `(invalid_token:issuer_unreachable) until it answers, asked again at most every ${Math.round(this.#options.retryAfterMs / 1000)} s, backing off to ${Math.round(this.#options.maxRetryAfterMs / 1000)} s`,
      );
    }
    throw error;
  }
}

/** An error's message with its causes' (`fetch failed` says nothing without `connect ECONNREFUSED …`). */
function describe(error: unknown): string {
  let text = errorMessage(error);
  let cause = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; cause !== undefined && depth < 4; depth++) {
    const message = errorMessage(cause);
    if (!text.includes(message)) text += ` (${message})`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return text;
}
