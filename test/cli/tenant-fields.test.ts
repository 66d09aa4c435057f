import test from 'ava';
import { applyTenantFields, schemaField, TENANT_FIELDS, UsageError } from '../../src/cli/commands/tenant-fields.js';

/** The one table `tenant add` and `tenant set` are built from, and the one-line way to add a plain field to it. */

test('schemaField checks a value with the tenants file’s own schema, names its flag, and sets the field', (t) => {
  const field = schemaField('workspace', '--workspace <dir>', 'a folder');
  const entry = { keys: [] };
  field.apply(entry, '/srv/acme');
  t.deepEqual(entry, { keys: [], workspace: '/srv/acme' });
  const error = t.throws(() => field.apply({ keys: [] }, 'relative/dir'), { instanceOf: UsageError });
  t.is(error.message, '--workspace must be an absolute path');
});

test('applyTenantFields changes a copy, only by the flags given, and says which', (t) => {
  const entry = { limits: { sessions: 2, memory: '512m' }, keys: [{ id: 'abcdefabcdef', hash: 'f'.repeat(64), createdAt: '2026-01-01T00:00:00.000Z' }] };
  const { entry: changed, changed: flags } = applyTenantFields(entry, { limit: { sessions: 3, memory: null }, networkAllow: ['example.com'] });
  t.deepEqual(flags, ['--limit', '--network-allow']);
  t.deepEqual(changed, { limits: { sessions: 3 }, network: { allow: ['example.com'] }, keys: entry.keys });
  t.deepEqual(entry.limits, { sessions: 2, memory: '512m' }, 'the entry given is left as it was');
  t.deepEqual(Object.keys(changed).at(-1), 'keys', 'keys stay last in the file');
  t.is(applyTenantFields(entry, {}).changed.length, 0);
  t.true(TENANT_FIELDS.every((field) => field.option().long?.startsWith('--')));
});

test('the runtime is one schemaField entry of TENANT_FIELDS: checked by the tenants file’s schema, named by its flag', (t) => {
  const { entry, changed } = applyTenantFields({ keys: [] }, { runtime: 'runsc' });
  t.deepEqual(changed, ['--runtime']);
  t.deepEqual(entry, { runtime: 'runsc', keys: [] });
  const error = t.throws(() => applyTenantFields({ keys: [] }, { runtime: 'run sc' }), { instanceOf: UsageError });
  t.is(error.message, '--runtime must be a runtime name such as runsc or runc');
});
