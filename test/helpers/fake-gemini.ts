import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server speaking the Gemini REST streaming wire format:
 * `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` answered with
 * `data: {GenerateContentResponse JSON}\r\n\r\n` events. Each request takes
 * the next scripted turn; every request is recorded. Point the real
 * @google/genai client at `url` (httpOptions.baseUrl or GOOGLE_GEMINI_BASE_URL).
 */

/** One GenerateContentResponse as JSON. */
export type FakeChunk = Record<string, unknown>;

/** A chunk, or a pause: a function the server awaits before sending what follows. */
export type FakeStep = FakeChunk | (() => Promise<void> | void);

export type FakeTurn =
  | {
      chunks: FakeStep[];
      /** Pause between chunks (default 0). */
      delayMs?: number;
      /**
       * How the response ends after the chunks: `close` (normal), `break`
       * (socket destroyed), `truncate` (half a JSON event, then close),
       * `hang` (never ends; the client must abort).
       */
      end?: 'close' | 'break' | 'truncate' | 'hang';
    }
  /** An HTTP error answer, as Google sends them (JSON `{error:{code,message,status}}`). */
  | { httpError: number; message?: string; status?: string }
  /** Chunks, then an error event inside the SSE stream (what the API does on mid-stream failures). */
  | { chunks: FakeStep[]; streamError: { code: number; message: string; status: string } };

export interface RecordedRequest {
  model: string;
  method: string;
  path: string;
  apiKey: string | undefined;
  body: {
    contents?: Array<{ role?: string; parts?: Array<Record<string, unknown>> }>;
    tools?: Array<{ functionDeclarations?: Array<{ name: string; parametersJsonSchema?: unknown }> }>;
    systemInstruction?: unknown;
    [key: string]: unknown;
  };
  /** Set when the client went away before the response ended (an abort). */
  disconnected: boolean;
}

export interface FakeGemini {
  /** Base URL for httpOptions.baseUrl / GOOGLE_GEMINI_BASE_URL. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Appends turns to the script. */
  script(...turns: FakeTurn[]): void;
  /** Turns not yet consumed. */
  readonly pending: number;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once request `index` has seen its client disconnect. */
  waitForDisconnect(index: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeGemini(...turns: FakeTurn[]): Promise<FakeGemini> {
  const script: FakeTurn[] = [...turns];
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const until = (predicate: () => boolean) =>
    new Promise<void>((resolve) => {
      if (predicate()) return resolve();
      const check = () => {
        if (predicate()) {
          waiters.delete(check);
          resolve();
        }
      };
      waiters.add(check);
    });

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake-gemini: ${String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/v1[a-z0-9]*\/models\/([^/:]+):streamGenerateContent$/.exec(url.pathname);
    const raw = await readBody(req);
    if (!match || req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: `fake-gemini: no route ${req.method} ${url.pathname}`, status: 'NOT_FOUND' } }));
      return;
    }
    const record: RecordedRequest = {
      model: decodeURIComponent(match[1] ?? ''),
      method: req.method,
      path: `${url.pathname}${url.search}`,
      apiKey: header(req, 'x-goog-api-key') ?? url.searchParams.get('key') ?? undefined,
      body: raw ? (JSON.parse(raw) as RecordedRequest['body']) : {},
      disconnected: false,
    };
    requests.push(record);
    let finished = false;
    res.on('close', () => {
      if (!finished) record.disconnected = true;
      notify();
    });
    notify();

    const turn = script.shift();
    if (!turn) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 500, message: `fake-gemini: no scripted turn left for request ${requests.length}`, status: 'INTERNAL' } }));
      finished = true;
      return;
    }
    if ('httpError' in turn) {
      res.writeHead(turn.httpError, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify({ error: { code: turn.httpError, message: turn.message ?? 'scripted error', status: turn.status ?? 'UNKNOWN' } }));
      finished = true;
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const delayMs = 'delayMs' in turn ? (turn.delayMs ?? 0) : 0;
    for (const step of turn.chunks) {
      if (record.disconnected) return;
      if (typeof step === 'function') {
        await step();
        continue;
      }
      res.write(`data: ${JSON.stringify(step)}\r\n\r\n`);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    if ('streamError' in turn) {
      res.write(`data: ${JSON.stringify({ error: turn.streamError })}\r\n\r\n`);
      finished = true;
      res.end();
      return;
    }
    const end = turn.end ?? 'close';
    if (end === 'hang') return;
    if (end === 'break') {
      // Give the written chunks a moment to leave, then cut the connection.
      await new Promise((resolve) => setTimeout(resolve, 20));
      res.socket?.destroy();
      return;
    }
    if (end === 'truncate') res.write('data: {"candidates": [{"content": {"parts": [{"text": "cut');
    finished = true;
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...more) => void script.push(...more),
    get pending() {
      return script.length;
    },
    waitForRequests: (count) => until(() => requests.length >= count),
    waitForDisconnect: (index) => until(() => requests[index]?.disconnected === true),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// ---- chunk builders -------------------------------------------------------

export interface FakeCall {
  name: string;
  args?: Record<string, unknown>;
  /** Omit to mimic the Gemini API, which usually sends calls without ids. */
  id?: string;
}

function candidate(parts: Array<Record<string, unknown>>, finishReason?: string): FakeChunk {
  return {
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
  };
}

/** A chunk of model text (add `finishReason` to end the answer with it). */
export function textChunk(text: string, finishReason?: string): FakeChunk {
  return candidate([{ text }], finishReason);
}

/** A chunk holding one or more FunctionCalls. */
export function callChunk(calls: FakeCall[], finishReason?: string): FakeChunk {
  return candidate(
    calls.map((call) => ({ functionCall: { name: call.name, args: call.args ?? {}, ...(call.id ? { id: call.id } : {}) } })),
    finishReason,
  );
}

/** The closing chunk: a finish reason and token usage. */
export function finishChunk(finishReason = 'STOP', usage = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }): FakeChunk {
  return { candidates: [{ content: { role: 'model', parts: [] }, index: 0, finishReason }], usageMetadata: usage };
}

/** A whole answer of plain text: `[text, STOP]`. */
export function textTurn(text: string): FakeTurn {
  return { chunks: [textChunk(text), finishChunk()] };
}

/** A whole answer that calls tools: `[calls, STOP]`. */
export function callTurn(calls: FakeCall[]): FakeTurn {
  return { chunks: [callChunk(calls), finishChunk()] };
}

/** The FunctionResponse parts of a recorded request's last user turn. */
export function functionResponsesOf(request: RecordedRequest | undefined): Array<{ id?: string; name?: string; response?: Record<string, unknown> }> {
  const last = request?.body.contents?.at(-1);
  return (last?.parts ?? [])
    .map((part) => part.functionResponse as { id?: string; name?: string; response?: Record<string, unknown> } | undefined)
    .filter((part): part is NonNullable<typeof part> => part !== undefined);
}
