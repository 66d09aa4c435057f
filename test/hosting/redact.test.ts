import test from 'ava';
import { createHash } from 'node:crypto';
import { REDACTED, redactArgs, redactString } from '../../src/hosting/audit/redact.js';

const R = REDACTED;

test('keys named like a secret lose their whole value, at any depth', (t) => {
  t.deepEqual(
    redactArgs({
      password: 'hunter2',
      api_key: 42,
      nested: { Authorization: 'Basic abc', client_secret: { any: 'thing' }, accessToken: 'x', plain: 'kept' },
      list: [{ token: 't' }],
    }),
    { password: R, api_key: R, nested: { Authorization: R, client_secret: R, accessToken: R, plain: 'kept' }, list: [{ token: R }] },
  );
});

test('the shell command is kept (up to the bound) except for its secret values', (t) => {
  const cases: Array<[string, string]> = [
    ['curl -H "Authorization: Bearer abc.def-123" https://api.example/x', `curl -H "Authorization: Bearer ${R}" https://api.example/x`],
    ['curl -H "authorization: token ghx123456789" u', `curl -H "authorization: token ${R}" u`],
    ['wget --header="Bearer abcdefgh1234"', `wget --header="Bearer ${R}"`],
    ['psql --password=s3cret -h db', `psql --password=${R} -h db`],
    ['tool --api-key "two words" --verbose', `tool --api-key ${R} --verbose`],
    ['mysql -u root -ps3cret shop', `mysql -u root -p${R} shop`],
    ['sshpass -pletmein ssh host', `sshpass -p${R} ssh host`],
    ['GITHUB_TOKEN=abc123 gh pr list', `GITHUB_TOKEN=${R} gh pr list`],
    ['export DB_PASSWORD="a b c"; run', `export DB_PASSWORD=${R}; run`],
    ["AWS_SECRET_ACCESS_KEY='wJalr/K7MDENG' aws s3 ls", `AWS_SECRET_ACCESS_KEY=${R} aws s3 ls`],
    ['curl "https://x/cb?token=abc&page=2"', `curl "https://x/cb?token=${R}&page=2"`],
    ['git clone https://bob:pa55word@git.example/repo', `git clone https://bob:${R}@git.example/repo`],
    ['curl -u admin:hunter2 https://x', `curl -u admin:${R} https://x`],
    [`curl -d '{"user":"a","password":"p\\"w"}' u`, `curl -d '{"user":"a","password":${R}}' u`],
  ];
  for (const [command, expected] of cases) t.is(redactArgs({ command }).command, expected, command);
});

test('token shapes are found wherever they stand', (t) => {
  const key = 'tc_abcdef123456_' + 'S'.repeat(32);
  t.is(redactString(`use ${key} now`), `use tc_abcdef123456_${R} now`, 'a toolcell key keeps its public id');
  t.is(redactString('id AKIAIOSFODNN7EXAMPLE.'), `id ${R}.`);
  t.is(redactString('gh auth ghp_' + 'a'.repeat(36)), `gh auth ${R}`);
  t.is(redactString('x github_pat_' + 'B'.repeat(40)), `x ${R}`);
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl';
  t.is(redactString(`echo ${jwt} | jq`), `echo ${R} | jq`);
  t.is(redactString('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'), R, 'an unsigned JWT too');
});

test('a PEM private key is replaced between its markers, also when cut short', (t) => {
  const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----';
  t.is(redactString(`printf '${pem}' > k`), `printf '-----BEGIN RSA PRIVATE KEY-----${R}-----END RSA PRIVATE KEY-----' > k`);
  t.is(redactString('-----BEGIN PRIVATE KEY-----\nMIIEv'), `-----BEGIN PRIVATE KEY-----${R}-----END PRIVATE KEY-----`);
  t.is(redactString('-----BEGIN PUBLIC KEY-----\nMIIB'), '-----BEGIN PUBLIC KEY-----\nMIIB', 'a public key stays');
});

test('ordinary commands pass unchanged', (t) => {
  for (const command of ['mkdir -p build && ls -la', 'ssh -p 2222 host uptime', 'grep -rn "token" src', 'echo $HOME', 'git log --author=bob', 'npm test']) {
    t.is(redactArgs({ command }).command, command);
  }
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

test('long strings, the command included, keep their head, their length and SHA-256', (t) => {
  const content = 'a'.repeat(10_000);
  const command = 'b'.repeat(3_900_000);
  const out = redactArgs({ file_path: 'f', content, command }, { maxStringChars: 100 });
  t.is(out['content'], `${'a'.repeat(100)}…[cut: 10000 bytes in all, sha256 ${sha256(content)}]`);
  t.is(out['command'], `${'b'.repeat(100)}…[cut: 3900000 bytes in all, sha256 ${sha256(command)}]`);
  t.is(out['file_path'], 'f');
});

test('a long value is redacted over the head it keeps, also a secret the cut runs through', (t) => {
  const token = 'ghp_' + 'Z'.repeat(36);
  const out = redactArgs({ command: `echo ${token} ${'x'.repeat(100_000)}` }, { maxStringChars: 20 });
  t.regex(out['command'] as string, /^echo \[REDACTED\] x{4}…\[cut: 100046 bytes in all, sha256 [0-9a-f]{64}\]$/);
  t.false((out['command'] as string).includes('ghp_'), 'not even the start of the token');
});

test("redaction never rewrites the caller's object", (t) => {
  const args = { command: 'TOKEN=x run', env: { password: 'p' } };
  redactArgs(args);
  t.deepEqual(args, { command: 'TOKEN=x run', env: { password: 'p' } });
});

test('a megabyte of awkward text is scanned in linear time (a quadratic rule would hit the test timeout)', (t) => {
  for (const unit of ['a.', 'ab-', 'mysql ', 'eyJaaaaa.', '//a:', 'x=', '"k":', '-----BEGIN PRIVATE KEY-----', '--p ', 'tc_abcdef_']) {
    const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
    t.true(redactString(text).length > 0, unit);
  }
});
