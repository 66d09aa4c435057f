import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { combineObservers } from '../../src/hosting/operations/combine-observers.js';
import type { HostingEvent } from '../../src/hosting/operations/hosting-events.js';
import { createRouter } from '../../src/hosting/http/route.js';

const event: HostingEvent = { event: 'quota_refusal', tenant: 'acme', limit: 'sessions' };

test('every observer sees each event; record resolves after all of them', async (t) => {
  const seen: string[] = [];
  const combined = combineObservers({ record: () => void seen.push('sync') }, { record: async () => void seen.push('async') });
  await combined.record(event);
  t.deepEqual(seen.sort(), ['async', 'sync']);
});

test('a failing observer rejects the record, after the others still saw the event', async (t) => {
  const seen: string[] = [];
  const combined = combineObservers(
    {
      record: async () => {
        throw Object.assign(new Error('disk full'), { code: 'audit_log_failed' });
      },
    },
    { record: () => void seen.push('metrics') },
  );
  await t.throwsAsync(combined.record(event), { message: 'disk full' });
  t.deepEqual(seen, ['metrics']);
});

test('the router picks exact paths first, then the longest prefix, else nothing', (t) => {
  const health = () => {};
  const admin = () => {};
  const route = createRouter({ exact: { '/healthz': health }, prefix: { '/admin/': admin } });
  const req = (url: string) => ({ url }) as IncomingMessage;
  t.is(route(req('/healthz?x=1')), health);
  t.is(route(req('/admin/sessions')), admin);
  t.is(route(req('/mcp')), undefined);
  t.is(route(req('/adminx')), undefined);
});
