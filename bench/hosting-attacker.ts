/**
 * A hostile tenant of bench/hosting, run as a child process so that its own
 * work (serialising 4 MB requests, opening sockets, parsing answers) is not
 * done on the server's event loop, which shares the bench's process. The
 * bench runs it at a low priority (nice 19 unless told otherwise): on the
 * bench's machine the attacker's client shares the server's cores, where a
 * real attacker's client runs on its own machine.
 *
 *   node dist/bench/hosting-attacker.js MODE URL KEY [COMMAND]
 *
 * It writes `ready` on stdout once its attack is under way (its sessions
 * open), attacks until it is sent SIGTERM, then ends its sessions (their
 * containers, and whatever runs in them, go) and writes one JSON line of
 * counts: `{"requests":N,"errors":N}` (errors: refused or failed requests
 * and calls, the defences at work).
 *
 * Modes (each what issue 22 saw a tenant do, with an ordinary key):
 * - shell: run_shell_command with COMMAND in a loop (a fork bomb, a spin, a
 *   flood of output, a disk fill), one call after another;
 * - huge-commands: run_shell_command with commands just under the
 *   131,071-byte cap, made of backtick substitutions the policy must parse
 *   and judge (the costliest judged input), four loops, and every tenth a
 *   3.9 MB one (under the 4 MB body cap) that must be refused as too long;
 * - regexes: grep_search with catastrophic regular expressions, and globs
 *   that backtrack, over a file made for them;
 * - stalled-bodies: POSTs announcing a 4 MiB body that stall before its last
 *   byte, 100 open at a time;
 * - bad-keys: requests with made-up keys as fast as they are answered (the
 *   audit log's flood);
 * - session-churn: initialize then DELETE, in a loop, four at a time;
 * - pings: pings with its own key as fast as they are answered, eight at a
 *   time (requests that are not calls: requestsPerMinute);
 * - unread-answers: read_file of a 19 MB image (a 25 MB answer) over
 *   connections of its own that it never reads, one after another (the
 *   answers the server holds: openResponses, unreadBytes, stalled writes).
 */
import { connect as connectSocket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fetchWithOwnSignal } from '../src/mcp/fetch-own-signal.js';

const [mode, url, key, shellCommand] = process.argv.slice(2) as [string, string, string, string | undefined];
const MiB = 1024 * 1024;
let stopping = false;
let requests = 0;
let errors = 0;
/** The sessions this attacker holds, ended when it stops. */
const sessions = new Set<StreamableHTTPClientTransport>();
/**
 * Each call's own controller, aborted when the attacker stops. One shared
 * signal would not do: the MCP SDK's client adds an abort listener to the
 * signal of every request and never removes it.
 */
const calls = new Set<AbortController>();
// The bench holds our stdin: when it goes (ended, or crashed), so do we.
process.stdin.on('close', () => process.exit(0)).resume();
process.on('SIGTERM', () => {
  stopping = true;
  for (const call of calls) call.abort();
  const done = (): never => {
    process.stdout.write(`${JSON.stringify({ requests, errors })}\n`);
    process.exit(0);
  };
  setTimeout(done, 3000).unref();
  void Promise.all([...sessions].map((transport) => transport.terminateSession().catch(() => undefined))).then(done);
});

/** Told once the attack is under way. */
function ready(): void {
  process.stdout.write('ready\n');
}

async function openSession(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'bench-attacker', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: fetchWithOwnSignal(),
  });
  await client.connect(transport);
  sessions.add(transport);
  return { client, transport };
}

/** A session, opened again and again until the server gives one (sessionsPerMinute answers 429 meanwhile): an attacker does not give up. */
function session(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  return persist(openSession);
}

/**
 * `attempt` again every second until it succeeds: a set-up step refused by a limit another attack of the same
 * tenant holds (its unread answers' bytes answer every request 429 meanwhile) waits, as a real attacker would.
 */
async function persist<T>(attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (stopping) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** One call, counted; a refusal or failure is the defence at work, not the attacker's end. */
async function call(client: Client, params: { name: string; arguments: Record<string, unknown> }): Promise<void> {
  const controller = new AbortController();
  calls.add(controller);
  requests++;
  try {
    const result = await client.callTool(params, undefined, { timeout: 300_000, signal: controller.signal });
    if (result.isError === true) errors++;
  } catch {
    errors++;
  } finally {
    calls.delete(controller);
  }
}

async function callLoop(client: Client, params: Array<{ name: string; arguments: Record<string, unknown> }>): Promise<void> {
  for (let i = 0; !stopping; i++) await call(client, params[i % params.length]!);
}

const CATASTROPHIC = ['^(a|aa)+$', '^(a+)+$', '(a|a)+$', '^(a*)*$', '(x+x+)+y', '(.*a){30}!', '^(\\w+\\s?)*!$', '((ab)*)+c'];
const BACKTRACKING_GLOB = '*a*a*a*a*a*a*a*a*a*a*b';

async function regexes(): Promise<void> {
  const setup = await session();
  const lines = `${'a'.repeat(44)}!\n${'a'.repeat(5000)}!\n`.repeat(50);
  await persist(() => setup.client.callTool({ name: 'write_file', arguments: { file_path: 'aaaa.txt', content: lines } }));
  await persist(() => setup.client.callTool({ name: 'write_file', arguments: { file_path: `${'a'.repeat(200)}.txt`, content: 'x' } }));
  await setup.transport.terminateSession().catch(() => undefined);
  sessions.delete(setup.transport);
  await setup.client.close();
  const searches = [
    ...CATASTROPHIC.map((pattern) => ({ name: 'grep_search', arguments: { pattern } })),
    { name: 'glob', arguments: { pattern: BACKTRACKING_GLOB } },
    { name: 'grep_search', arguments: { pattern: 'a', include_pattern: BACKTRACKING_GLOB } },
    { name: 'list_directory', arguments: { dir_path: '.', ignore: [BACKTRACKING_GLOB] } },
  ];
  // Two loops: a tenant holds as many workers as its calls allow.
  const [first, second] = [await session(), await session()];
  ready();
  await Promise.all([callLoop(first.client, searches), callLoop(second.client, [...searches].reverse())]);
}

function stalledBodies(): void {
  const port = new URL(url).port;
  const body = Buffer.alloc(4 * MiB - 1, 0x20);
  const open = (): void => {
    if (stopping) return;
    const socket = connectSocket(Number(port), new URL(url).hostname);
    socket.on('error', () => {});
    socket.on('data', () => {});
    // Answered (408 after the read timeout, 503 at once past the budget): open the next one.
    socket.on('close', () => setTimeout(open, 100));
    requests++;
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: ${new URL(url).host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${4 * MiB}\r\n\r\n`,
    );
    socket.write(body);
  };
  for (let i = 0; i < 100; i++) open();
  ready();
}

async function badKeys(): Promise<void> {
  const flood = async (): Promise<void> => {
    for (let i = 0; !stopping; i++) {
      requests++;
      await fetch(url, {
        method: 'POST',
        headers: { Authorization: `Bearer tc_${Math.random().toString(36).slice(2)}_${i}`, 'Content-Type': 'application/json' },
        body: '{}',
      })
        .then(async (response) => {
          if (!response.ok) errors++;
          await response.arrayBuffer();
        })
        .catch(() => errors++);
    }
  };
  ready();
  await Promise.all(Array.from({ length: 8 }, flood));
}

async function sessionChurn(): Promise<void> {
  const churn = async (): Promise<void> => {
    while (!stopping) {
      requests++;
      const opened = await openSession().catch(() => undefined);
      if (!opened) {
        errors++;
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      await opened.transport.terminateSession().catch(() => undefined);
      sessions.delete(opened.transport);
      await opened.client.close().catch(() => undefined);
    }
  };
  ready();
  await Promise.all(Array.from({ length: 4 }, churn));
}

async function pings(): Promise<void> {
  const { transport } = await session();
  const flood = async (loop: number): Promise<void> => {
    for (let i = 0; !stopping; i++) {
      requests++;
      await fetch(url, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': transport.sessionId ?? '',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: `ping-${loop}-${i}`, method: 'ping' }),
      })
        .then(async (response) => {
          if (!response.ok) errors++;
          await response.arrayBuffer();
        })
        .catch(() => errors++);
    }
  };
  ready();
  await Promise.all(Array.from({ length: 8 }, (_, loop) => flood(loop)));
}

async function unreadAnswers(): Promise<void> {
  const { client, transport } = await session();
  // A PNG's signature, then zeros: read_file answers it whole, base64.
  await persist(() =>
    client.callTool({
      name: 'run_shell_command',
      arguments: { command: "printf '\\211PNG\\r\\n\\032\\n' > big.png && head -c 19000000 /dev/zero >> big.png" },
    }),
  );
  const target = new URL(url);
  const held: Array<ReturnType<typeof connectSocket>> = [];
  ready();
  for (let id = 0; !stopping; id++) {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: `unread-${id}`,
      method: 'tools/call',
      params: { name: 'read_file', arguments: { file_path: 'big.png' } },
    });
    const socket = connectSocket(Number(target.port), target.hostname);
    socket.on('error', () => {});
    socket.on('close', () => held.splice(held.indexOf(socket), 1));
    socket.pause();
    requests++;
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: ${target.host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${transport.sessionId ?? ''}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    held.push(socket);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  held.forEach((socket) => socket.destroy());
}

switch (mode) {
  case 'shell': {
    if (shellCommand === undefined) {
      process.stderr.write('hosting-attacker: shell needs a COMMAND\n');
      process.exit(2);
    }
    const { client } = await session();
    ready();
    const params = { name: 'run_shell_command', arguments: { command: shellCommand } };
    await callLoop(client, [params]);
    break;
  }
  case 'huge-commands': {
    // Unique each time (no cache can answer it): ~128 KiB of `a` substitutions, each judged as a command of its own.
    const judged = (i: number): string => `echo ${i} ${'`a` '.repeat(Math.floor((128 * 1024 - 32) / 4))}`;
    // Past the cap: refused as command_too_long before any parse.
    const tooLong = (i: number): string => `echo ${i} ${'a && b || c | d ; '.repeat(Math.floor((3.9 * MiB) / 18))}`;
    const { client } = await session();
    ready();
    const loop = async (offset: number): Promise<void> => {
      for (let i = offset; !stopping; i += 4) await call(client, { name: 'run_shell_command', arguments: { command: i % 10 === 9 ? tooLong(i) : judged(i) } });
    };
    await Promise.all([loop(0), loop(1), loop(2), loop(3)]);
    break;
  }
  case 'regexes':
    await regexes();
    break;
  case 'stalled-bodies':
    stalledBodies();
    break;
  case 'bad-keys':
    await badKeys();
    break;
  case 'session-churn':
    await sessionChurn();
    break;
  case 'pings':
    await pings();
    break;
  case 'unread-answers':
    await unreadAnswers();
    break;
  default:
    process.stderr.write(`hosting-attacker: unknown mode ${mode}\n`);
    process.exit(2);
}
