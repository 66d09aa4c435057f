import test from 'ava';
import { formatSubject, sessionsTable } from '../../src/cli/commands/hosting-table.js';

const row = { id: '6f1c2b0e-1111-4222-8333-444455556666', tenant: 'acme', runtime: 'runsc', ageMs: 61_000, calls: 3, memoryBytes: 12 * 1024 * 1024 } as const;

test("a token's sub with terminal escapes can neither erase its row nor draw another", (t) => {
  // What the attack sent as `sub`: erase the line, go up, and print a row of another tenant.
  const sub = `\x1b[2K\x1b[1A\x1b[2K\r${row.id}  beta  key:abcdefabcdef  1s  0  -\n`;
  const table = sessionsTable([
    { ...row, subject: 'alice', via: 'api_key' },
    { ...row, subject: sub, via: 'oidc' },
  ]);
  const lines = table.split('\n');
  t.is(lines.length, 4, table);
  t.is(lines[3], '');
  // eslint-disable-next-line no-control-regex -- finding control characters is the point.
  t.false(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(table), JSON.stringify(table));
  t.true(lines[2]!.includes('oidc:"\\x1b[2K\\x1b[1A\\x1b[2K\\r6f1c'), lines[2]);
  t.regex(lines[1]!, /^6f1c\S+ +acme +key:alice +runsc +1m01s +3 +12\.0 MiB$/);
});

test('the subject says which kind of name it is: a key id or a token sub', (t) => {
  t.is(formatSubject({ subject: 'xfyjbplgwndk', via: 'api_key' }), 'key:xfyjbplgwndk');
  t.is(formatSubject({ subject: 'xfyjbplgwndk', via: 'oidc' }), 'oidc:xfyjbplgwndk');
  t.is(formatSubject({ subject: 'u\u202e1' }), 'u\\u202e1');
});

test('every string the server sent is escaped, even in columns a server should fill with numbers', (t) => {
  const hostile = {
    ...row,
    id: 'x\x1b]0;pwned\x07',
    tenant: 'a\u2028b',
    subject: 's',
    runtime: 'runsc\x1b[2J',
    calls: '1\r2' as unknown as number,
    memoryBytes: 'big' as unknown as number,
  };
  const table = sessionsTable([hostile]);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point.
  t.false(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028]/.test(table), JSON.stringify(table));
  t.is(table.split('\n').length, 3);
});
