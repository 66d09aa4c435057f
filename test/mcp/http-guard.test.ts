import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { createHttpGuard } from '../../src/mcp/server/http-guard.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

test('a loopback bind accepts 127.0.0.1, localhost and [::1] with its port, nothing else', (t) => {
  const guard = createHttpGuard({ host: '127.0.0.1', port: 8123 });
  for (const host of ['127.0.0.1:8123', 'localhost:8123', '[::1]:8123', 'LOCALHOST:8123']) t.is(guard(req({ host })), undefined, host);
  for (const host of ['evil.example:8123', '127.0.0.1:9999', 'localhost', '']) t.is(guard(req({ host }))?.status, 403, host);
});

test('an Origin must be one of the accepted hosts', (t) => {
  const guard = createHttpGuard({ host: '127.0.0.1', port: 8123 });
  t.is(guard(req({ host: '127.0.0.1:8123', origin: 'http://localhost:8123' })), undefined);
  t.is(guard(req({ host: '127.0.0.1:8123', origin: 'http://evil.example:8123' }))?.status, 403);
  t.is(guard(req({ host: '127.0.0.1:8123', origin: 'http://localhost' }))?.status, 403);
  t.is(guard(req({ host: '127.0.0.1:8123', origin: 'null' }))?.status, 403);
  t.is(guard(req({ host: '127.0.0.1:8123', origin: 'not a url' }))?.status, 403);
});

test('a specific address accepts itself and allowedHosts', (t) => {
  const guard = createHttpGuard({ host: '10.1.2.3', port: 80, token: 'long-enough-token', allowedHosts: ['tools.example:80'] });
  const auth = { authorization: 'Bearer long-enough-token' };
  t.is(guard(req({ host: '10.1.2.3:80', ...auth })), undefined);
  t.is(guard(req({ host: 'tools.example:80', ...auth })), undefined);
  t.is(guard(req({ host: 'localhost:80', ...auth }))?.status, 403);
});

test('a wildcard bind accepts any Host but only a same-host Origin', (t) => {
  const guard = createHttpGuard({ host: '0.0.0.0', port: 8080, token: 'long-enough-token' });
  const auth = { authorization: 'Bearer long-enough-token' };
  t.is(guard(req({ host: 'box.lan:8080', ...auth })), undefined);
  t.is(guard(req({ host: 'box.lan:8080', origin: 'http://box.lan:8080', ...auth })), undefined);
  t.is(guard(req({ host: 'box.lan:8080', origin: 'http://evil.example', ...auth }))?.status, 403);
});

test('the bearer token is required and compared exactly; the scheme name in any case', (t) => {
  const guard = createHttpGuard({ host: '127.0.0.1', port: 1, token: 'the-right-token' });
  const host = '127.0.0.1:1';
  t.like(guard(req({ host })), { status: 401, message: 'Missing bearer token (Authorization: Bearer <token>)' });
  t.like(guard(req({ host, authorization: 'Bearer the-right-toke' })), { status: 401, message: 'Invalid bearer token' });
  t.like(guard(req({ host, authorization: 'Basic the-right-token' })), { status: 401 });
  t.like(guard(req({ host, authorization: 'Bearer THE-RIGHT-TOKEN' })), { status: 401 });
  t.like(guard(req({ host, authorization: 'Bearer the-right-token extra' })), { status: 401 });
  t.like(guard(req({ host, authorization: 'the-right-token' })), { status: 401 });
  t.is(guard(req({ host, authorization: 'Bearer the-right-token' })), undefined);
  t.is(guard(req({ host, authorization: 'bearer the-right-token' })), undefined);
  t.is(guard(req({ host, authorization: 'BEARER  the-right-token ' })), undefined);
});
