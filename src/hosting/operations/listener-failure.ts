import { errorMessage } from '../../errors.js';

/** What a failed listen means, by the error's code, in words an operator acts on. */
const MEANING: Record<string, string> = {
  EADDRINUSE: 'another process listens on that address',
  EACCES: 'permission denied (a port below 1024 needs root or CAP_NET_BIND_SERVICE)',
  EADDRNOTAVAIL: 'no interface of this machine has that address',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve (the lookup failed)',
};

/**
 * A listener the operator asked for (`--http`, `--metrics`, TLS) that could
 * not open. The server must not start without it: a server quietly missing
 * its metrics or serving plain HTTP where TLS was asked for is worse than
 * one that stops and says which flag to fix.
 */
export class ListenerFailure extends Error {
  constructor(flag: string, value: string, error: unknown) {
    const code = (error as { code?: unknown } | null)?.code;
    const meaning = typeof code === 'string' && MEANING[code] ? `${MEANING[code]} (${code})` : errorMessage(error);
    super(`${flag} ${value}: cannot listen: ${meaning}`, { cause: error });
    this.name = 'ListenerFailure';
  }
}

/** True for the errors a `listen` (or the lookup of its host name) fails with. */
export function isListenError(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  return syscall === 'listen' || syscall === 'bind' || (typeof code === 'string' && code in MEANING);
}
