import anyTest, { type TestFn } from 'ava';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { AuditLog } from '../../src/hosting/audit/audit-log.js';
import { combineObservers } from '../../src/hosting/operations/combine-observers.js';
import { readAuditLines } from '../helpers/audit-log.js';
import { runCli } from '../helpers/cli.js';
import { eventually, requireDocker } from '../helpers/docker.js';
import {
  addTenant,
  call,
  connectAs,
  hostingFolder,
  listToolsMessage,
  post,
  RecordingObserver,
  startHosting,
  type Connection,
  type Hosting,
} from '../helpers/hosting.js';

/**
 * How sessions end besides the client's DELETE: a revoked key closes what it
 * opened, and a session closed for a limit tells its client why (a logging
 * notification, then a 404 naming the limit, to its owner only). Real
 * Docker, real HTTP, the SDK client; every wait is for an event.
 */
interface Context {
  hosting: Hosting;
  /** Every event the server told, as the audit log was told it too. */
  observer: RecordingObserver;
  auditFile: string;
  closeAudit: () => Promise<void>;
  file: string;
  /** Each tenant's keys, in the order they were added. */
  keys: Record<string, string[]>;
}
const test = (await requireDocker(anyTest as TestFn<Context>, 'hosting/session-end')).serial;

const TENANTS: Record<string, { keys: number; limits: string[] }> = {
  pair: { keys: 2, limits: [] },
  whole: { keys: 2, limits: [] },
  short: { keys: 1, limits: ['--limit', 'maxSessionSeconds=2'] },
  idle: { keys: 1, limits: ['--limit', 'idleSeconds=1'] },
  other: { keys: 1, limits: [] },
};

anyTest.before(async (t) => {
  const dir = await hostingFolder({ teardown: () => {} }, 'toolcell-session-end-');
  const context = t.context as Context;
  context.file = join(dir, 'tenants.json');
  context.keys = {};
  for (const [name, { keys, limits }] of Object.entries(TENANTS)) {
    context.keys[name] = [];
    for (let i = 0; i < keys; i++) context.keys[name].push(await addTenant(context.file, name, i === 0 ? limits : []));
  }
  context.observer = new RecordingObserver();
  context.auditFile = join(dir, 'audit.jsonl');
  const audit = await AuditLog.open({ path: context.auditFile });
  context.closeAudit = () => audit.close();
  context.hosting = await startHosting({ tenantsFile: context.file, dataDir: join(dir, 'data'), observer: combineObservers(context.observer, audit) });
});

anyTest.after.always(async (t) => {
  await (t.context as Partial<Context>).hosting?.close();
  await (t.context as Partial<Context>).closeAudit?.();
});

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const keyId = (key: string) => key.slice(3, 15);

/** The logging notifications a connection receives, and the first one as a promise. */
function warnings(connection: Connection): Promise<LoggingMessageNotification['params']> {
  return new Promise((resolve) => connection.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => resolve(notification.params)));
}

test('revoking one key closes the sessions it opened (key_revoked, audited) and leaves those of the tenant’s other key', async (t) => {
  const { hosting, observer, keys, file } = t.context;
  const [first, second] = keys['pair']!;
  const doomed = await connectAs(hosting.server.url, first!);
  const kept = await connectAs(hosting.server.url, second!);
  t.teardown(() => Promise.all([doomed.close(), kept.close()]));
  await call(doomed.client, 'run_shell_command', { command: 'true' });
  const revoke = await runCli(['tenant', 'revoke', 'pair', '--key', keyId(first!), '--tenants', file]);
  t.is(revoke.code, 0, revoke.stderr);
  t.like(await observer.waitFor((event) => event.event === 'session_close' && event.session === doomed.sessionId), {
    tenant: 'pair',
    reason: 'key_revoked',
  });
  const live = hosting.server.listSessions().map((session) => session.id);
  t.false(live.includes(doomed.sessionId));
  t.true(live.includes(kept.sessionId));
  t.regex((await call(kept.client, 'run_shell_command', { command: 'echo still here' })).text, /still here/);
  // The closed session's id is not the other key's to use: the 404 of any id that is not its own.
  t.is((await post(hosting.server.url, listToolsMessage(), { ...auth(second!), 'Mcp-Session-Id': doomed.sessionId })).status, 404);
  t.false(observer.events.some((event) => event.event === 'session_close' && event.session === kept.sessionId));
  // The audit line is written a moment after the observer heard the event.
  const audited = async () =>
    (await readAuditLines(t.context.auditFile)).find((line) => line['event'] === 'session_close' && line['session'] === doomed.sessionId);
  t.true(await eventually(async () => (await audited()) !== undefined));
  t.like(await audited(), { tenant: 'pair', reason: 'key_revoked' });
});

test('`tenant revoke NAME` without --key revokes every key and closes every session of the tenant', async (t) => {
  const { hosting, observer, keys, file } = t.context;
  const sessions = await Promise.all(keys['whole']!.map((key) => connectAs(hosting.server.url, key)));
  t.teardown(() => Promise.all(sessions.map((session) => session.close())));
  const revoke = await runCli(['tenant', 'revoke', 'whole', '--tenants', file]);
  t.is(revoke.code, 0, revoke.stderr);
  for (const session of sessions) {
    t.like(await observer.waitFor((event) => event.event === 'session_close' && event.session === session.sessionId), { reason: 'key_revoked' });
  }
});

test('a session closed at maxSessionSeconds tells its client why, then answers its owner 404 naming the limit, and others as an unknown id', async (t) => {
  const { hosting, observer, keys } = t.context;
  const key = keys['short']![0]!;
  const short = await connectAs(hosting.server.url, key);
  t.teardown(() => short.close());
  const warned = warnings(short);
  const notice = await warned;
  t.is(notice.level, 'warning');
  t.regex(String(notice.data), /reached its limit maxSessionSeconds \(2 s\) and was closed/);
  t.like(await observer.waitFor((event) => event.event === 'session_close' && event.session === short.sessionId), { reason: 'max_lifetime' });

  const owner = await post(hosting.server.url, listToolsMessage(), { ...auth(key), 'Mcp-Session-Id': short.sessionId });
  t.is(owner.status, 404);
  const ownerBody = (await owner.json()) as { error: { code: number; message: string; data?: { type?: string } } };
  t.is(ownerBody.error.code, -32001);
  t.regex(ownerBody.error.message, /^Session not found: the session reached its limit maxSessionSeconds \(2 s\)/);
  t.is(ownerBody.error.data?.type, 'session_ended');

  // Another tenant holding the id learns nothing: byte for byte what an id that never existed gets.
  const other = keys['other']![0]!;
  const stranger = await post(hosting.server.url, listToolsMessage(), { ...auth(other), 'Mcp-Session-Id': short.sessionId });
  const unknown = await post(hosting.server.url, listToolsMessage(), { ...auth(other), 'Mcp-Session-Id': randomUUID() });
  t.is(stranger.status, 404);
  t.is(unknown.status, 404);
  t.is(await stranger.text(), await unknown.text());
});

test('a session closed at idleSeconds tells its client so on its event stream', async (t) => {
  const { hosting, observer, keys } = t.context;
  const key = keys['idle']![0]!;
  const idle = await connectAs(hosting.server.url, key);
  t.teardown(() => idle.close());
  const notice = await warnings(idle);
  t.is(notice.level, 'warning');
  t.regex(String(notice.data), /reached its limit idleSeconds \(1 s without a request\) and was closed/);
  t.like(await observer.waitFor((event) => event.event === 'session_close' && event.session === idle.sessionId), { reason: 'idle' });
  const owner = await post(hosting.server.url, listToolsMessage(), { ...auth(key), 'Mcp-Session-Id': idle.sessionId });
  t.is(owner.status, 404);
  t.regex(((await owner.json()) as { error: { message: string } }).error.message, /idleSeconds \(1 s without a request\)/);
});
