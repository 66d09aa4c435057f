import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * fetch for the MCP SDK's HTTP client transport, giving each request a
 * signal of its own. The transport hands every request its one AbortSignal;
 * Node's fetch (undici) adds an abort listener to it per request and removes
 * it only when the request is garbage-collected, so a long-lived client
 * piles listeners on that signal (Node warns past 1,500:
 * MaxListenersExceededWarning, seen after a few thousand calls). Here each
 * request gets its own controller, tied to the caller's signal while the
 * request or its body is in flight and untied when the body ends, fails or
 * is cancelled: the caller's signal keeps at most one listener per open
 * request, and aborting it still ends every one of them.
 */
export function fetchWithOwnSignal(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const outer = init?.signal;
    if (!outer) return base(url, init);
    const own = new AbortController();
    const forward = () => own.abort(outer.reason);
    const untie = () => outer.removeEventListener('abort', forward);
    if (outer.aborted) own.abort(outer.reason);
    else outer.addEventListener('abort', forward, { once: true });
    let response: Response;
    try {
      response = await base(url, { ...init, signal: own.signal });
    } catch (error) {
      untie();
      throw error;
    }
    // Only a success's body may stream for long (SSE); a redirect or an error is judged on its status and a
    // short text, and is passed on as it came (a constructed Response cannot carry every status).
    if (response.body === null || response.status < 200 || response.status > 299) {
      untie();
      return response;
    }
    return withBodyUntying(response, untie);
  };
}

/** The same response, its body read through a stream that calls `untie` once it ends, fails or is cancelled. */
function withBodyUntying(response: Response, untie: () => void): Response {
  const reader = response.body!.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          untie();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        untie();
        controller.error(error);
      }
    },
    async cancel(reason) {
      untie();
      await reader.cancel(reason);
    },
  });
  const wrapped = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  // A constructed Response has no url and is of type 'default'; the SDK reads both when it judges a redirect.
  for (const name of ['url', 'redirected', 'type'] as const) Object.defineProperty(wrapped, name, { value: response[name] });
  return wrapped;
}
