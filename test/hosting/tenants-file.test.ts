import test from 'ava';
import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isToolcellError } from '../../src/errors.js';
import { parseSize } from '../../src/backends/session-limits.js';
import { parseLimitAssignment, resolveLimits } from '../../src/hosting/admission/limits.js';
import { emptyTenantsFile, readTenantsFile, writeTenantsFile } from '../../src/hosting/tenants/tenants-file.js';

const folder = () => mkdtemp(join(tmpdir(), 'toolcell-tenants-'));
const validKey = { id: 'abcdefghij12', hash: 'a'.repeat(64), createdAt: '2026-01-01T00:00:00.000Z' };

test('sizes accept k, m and g suffixes in binary units', (t) => {
  t.is(parseSize('512m'), 512 * 1024 ** 2);
  t.is(parseSize('1g'), 1024 ** 3);
  t.is(parseSize('64K'), 64 * 1024);
  t.is(parseSize('4096'), 4096);
  t.is(parseSize('1.5g'), 1.5 * 1024 ** 3);
  t.is(parseSize('12q'), undefined);
  t.is(parseSize('-1m'), undefined);
});

test('a tenant limit wins over the defaults, which win over the built-in ones', (t) => {
  const limits = resolveLimits({ sessions: 2, memory: '1g' }, { memory: '256m' });
  t.is(limits.sessions, 2);
  t.is(limits.memory, 256 * 1024 ** 2);
  t.is(limits.concurrentCalls, 4);
});

test('requestsPerMinute defaults to 1200, or twice callsPerMinute where that is more; a value of its own wins', (t) => {
  t.is(resolveLimits(undefined, undefined).requestsPerMinute, 1200);
  t.is(resolveLimits(undefined, { callsPerMinute: 2 }).requestsPerMinute, 1200, "room for a session's own requests however few its calls");
  t.is(resolveLimits({ callsPerMinute: 5000 }, undefined).requestsPerMinute, 10_000);
  t.is(resolveLimits({ callsPerMinute: 5000 }, { requestsPerMinute: 30 }).requestsPerMinute, 30);
});

test('--limit KEY=VALUE names an unknown limit and a non-number', (t) => {
  t.deepEqual(parseLimitAssignment('memory=512m'), ['memory', '512m']);
  t.deepEqual(parseLimitAssignment('cpus=0.5'), ['cpus', 0.5]);
  t.throws(() => parseLimitAssignment('memroy=1g'), { message: /unknown limit "memroy"/ });
  t.throws(() => parseLimitAssignment('pids=many'), { message: /pids must be a number/ });
  t.throws(() => parseLimitAssignment('pids'), { message: /expected KEY=VALUE/ });
});

test('the file is written with mode 0600 and read back', async (t) => {
  const file = join(await folder(), 'tenants.json');
  const content = emptyTenantsFile();
  content.tenants['acme'] = { keys: [validKey], limits: { memory: '512m' } };
  await writeTenantsFile(file, content);
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.deepEqual(await readTenantsFile(file), content);
});

test('errors name the file and the field', async (t) => {
  const file = join(await folder(), 'tenants.json');
  const check = async (value: unknown, field: RegExp) => {
    await writeFile(file, JSON.stringify(value));
    const error = await t.throwsAsync(readTenantsFile(file));
    t.true(isToolcellError(error) && error.code === 'invalid_tenants_file');
    t.true(error!.message.includes(file), error!.message);
    t.regex(error!.message, field);
  };
  await check({ version: 1, tenants: { acme: { keys: [{ ...validKey, hash: 'nope' }] } } }, /tenants\.acme\.keys\.0\.hash must be a SHA-256/);
  await check({ version: 1, tenants: { acme: { keys: [], limits: { memory: '12q' } } } }, /tenants\.acme\.limits\.memory must be a size/);
  await check({ version: 1, tenants: { acme: { keys: [], limts: {} } } }, /tenants\.acme\.limts is not a known field/);
  await check({ version: 1, tenants: { 'Not OK': { keys: [] } } }, /tenants\.Not OK must be 1-63 characters/);
  await check({ version: 2, tenants: {} }, /version/);
  await check({ version: 1, tenants: { a: { keys: [validKey] }, b: { keys: [validKey] } } }, /tenants\.b\.keys\.0\.id must be unique/);
  await check(
    { version: 1, tenants: { a: { workspace: '/srv/a', keys: [] }, b: { workspace: '/srv/a/b', keys: [] } } },
    /tenants\.b\.workspace must not be or lie inside tenant a's workspace/,
  );
  await writeFile(file, '{not json');
  await t.throwsAsync(readTenantsFile(file), { message: new RegExp(`${file} is not valid JSON \\(line 1, column 2: this is not a JSON value`) });
  await writeFile(file, '{\n  "version": 1,\n  "tenants": {}\n  "defaults": {}\n}\n');
  await t.throwsAsync(readTenantsFile(file), { message: /is not valid JSON \(line 4, column 3: a comma is expected\)\.$/ });
});

test('a missing file is an error unless the caller creates it', async (t) => {
  const file = join(await folder(), 'none.json');
  t.is(await readTenantsFile(file, { missingOk: true }), undefined);
  await t.throwsAsync(readTenantsFile(file), { message: /Cannot read tenants file/ });
});
