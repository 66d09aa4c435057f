/**
 * Run in the hub namespace (a client of the cluster): opens MCP-like
 * sessions through the fronts and checks where their later requests land.
 *   node front-sessions.js open  CA FRONTS N          → {"sessions":[{"id","node"}…], "failures":[…]}
 *   node front-sessions.js follow CA FRONTS FILE K    → {"answers":[{"id","status","node","retryAfter","body"}…]}
 * FRONTS: comma-separated host:port, one picked at random per request; HTTPS, the front's
 * certificate checked against the CA file.
 * Each request has its own time limit; the whole run is bounded by N or K.
 */
import { readFileSync } from 'node:fs';
import { tlsFetch } from './tls-fetch.js';

const [mode, ca, frontList, arg1, arg2] = process.argv.slice(2);
const fetchTls = tlsFetch({ ca: readFileSync(ca!) });
const fronts = (frontList ?? '').split(',').filter(Boolean);
const pick = () => fronts[Math.floor(Math.random() * fronts.length)]!;

async function post(front: string, session?: string) {
  const response = await fetchTls(`https://${front}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(session !== undefined ? { 'mcp-session-id': session } : {}) },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    signal: AbortSignal.timeout(10_000),
  });
  const body = await response.text();
  let node: string | undefined;
  try {
    node = (JSON.parse(body) as { node?: string }).node;
  } catch {
    node = undefined;
  }
  return {
    status: response.status,
    node,
    session: response.headers.get('mcp-session-id') ?? undefined,
    retryAfter: response.headers.get('retry-after') ?? undefined,
    body,
  };
}

if (mode === 'open') {
  const count = Number(arg1);
  const sessions: { id: string; node: string }[] = [];
  const failures: string[] = [];
  for (let i = 0; i < count; i++) {
    const front = pick();
    try {
      const answer = await post(front);
      if (answer.status === 200 && answer.session !== undefined && answer.node !== undefined) sessions.push({ id: answer.session, node: answer.node });
      else failures.push(`${front}: ${answer.status} ${answer.body.slice(0, 200)}`);
    } catch (error) {
      failures.push(`${front}: ${(error as Error).message}`);
    }
  }
  process.stdout.write(JSON.stringify({ sessions, failures }));
} else if (mode === 'follow') {
  const { sessions } = JSON.parse(readFileSync(arg1!, 'utf8')) as { sessions: { id: string; node: string }[] };
  const rounds = Number(arg2);
  const answers: { id: string; expected: string; front: string; status: number; node?: string; retryAfter?: string; body: string }[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const session of sessions) {
      const front = pick();
      try {
        const answer = await post(front, session.id);
        answers.push({
          id: session.id,
          expected: session.node,
          front,
          status: answer.status,
          node: answer.node,
          retryAfter: answer.retryAfter,
          body: answer.body.slice(0, 300),
        });
      } catch (error) {
        answers.push({ id: session.id, expected: session.node, front, status: 0, body: (error as Error).message });
      }
    }
  }
  process.stdout.write(JSON.stringify({ answers }));
} else {
  process.stderr.write('usage: front-sessions.js open CA FRONTS N | follow CA FRONTS FILE K\n');
  process.exitCode = 2;
}
