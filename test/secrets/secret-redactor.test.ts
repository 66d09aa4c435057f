import test from 'ava';
import { SecretRedactor } from '../../src/secrets/secret-redactor.js';
import { secretVariants } from '../../src/secrets/secret-variants.js';

const TOKEN = 'ghp_S3cr3tT0ken+/value=42';
const redactor = SecretRedactor.of({ GH_TOKEN: TOKEN })!;

test('the value and its encodings are redacted from text, the name shown instead', (t) => {
  const forms = [
    TOKEN,
    JSON.stringify({ token: TOKEN }),
    encodeURIComponent(TOKEN),
    Buffer.from(TOKEN).toString('base64'),
    Buffer.from(`${TOKEN}\n`).toString('base64'),
    Buffer.from(`x${TOKEN}`).toString('base64'),
    Buffer.from(`xy${TOKEN}`).toString('base64'),
    Buffer.from(`user:${TOKEN}`).toString('base64url'),
    Buffer.from(TOKEN).toString('hex'),
    Buffer.from(TOKEN).toString('hex').toUpperCase(),
  ];
  for (const form of forms) {
    const out = redactor.redact(`before ${form} after`);
    t.true(out.includes('[REDACTED:GH_TOKEN]'), form);
    t.false(out.includes(TOKEN), form);
    // No run of 12 characters of any encoded form survives.
    for (const variant of secretVariants(TOKEN))
      for (let i = 0; i + 12 <= variant.length; i++) t.false(out.includes(variant.slice(i, i + 12)), `${form}: ${variant}`);
  }
});

test('a value of several lines (a PEM key) is redacted line by line as well as whole', (t) => {
  const pem = '-----BEGIN KEY-----\nMIIBVwIBADANBgkqhkiG9w0BAQEFAASCAUEwggE9AgEAAkEA\nq7BFUpkGp3+XQdZ9bLh\n-----END KEY-----';
  const multi = SecretRedactor.of({ KEY: pem })!;
  t.notRegex(multi.redact(pem), /MIIBVw|q7BFUp/);
  t.notRegex(multi.redact(pem.replace(/\n/g, '\r\n')), /MIIBVw|q7BFUp/);
  t.notRegex(multi.redact(`line: MIIBVwIBADANBgkqhkiG9w0BAQEFAASCAUEwggE9AgEAAkEA`), /MIIBVw/);
});

test('ordinary output passes unchanged', (t) => {
  const text = 'total 8\ndrwxr-xr-x 2 sandbox sandbox 4096 .\n';
  t.is(redactor.redact(text), text);
  t.is(SecretRedactor.of({}), undefined);
});

test('tool arguments: every string of a JSON value, keys included', (t) => {
  t.deepEqual(redactor.redactValue({ command: `curl -H "x: ${TOKEN}"`, list: [TOKEN, 3], [TOKEN]: true }), {
    command: 'curl -H "x: [REDACTED:GH_TOKEN]"',
    list: ['[REDACTED:GH_TOKEN]', 3],
    '[REDACTED:GH_TOKEN]': true,
  });
});

test('a byte stream: a secret split across chunks, at any place, never passes', (t) => {
  const whole = Buffer.from(`start ${TOKEN} middle ${Buffer.from(TOKEN).toString('base64')} end`);
  // Base64 keeps its last character or two: they hold bits of the neighbours too.
  const expected = redactor.redact(whole.toString());
  t.regex(expected, /^start \[REDACTED:GH_TOKEN\] middle \[REDACTED:GH_TOKEN\].{0,3} end$/);
  for (let cut = 1; cut < whole.length; cut++) {
    const stream = redactor.byteStream();
    const out = Buffer.concat([stream.push(whole.subarray(0, cut)), stream.push(whole.subarray(cut)), stream.flush()]).toString();
    t.is(out, expected, `cut at ${cut}`);
  }
});

test('a byte stream holds back only what could start a secret, and a long start cut off at the end is redacted', (t) => {
  const stream = redactor.byteStream();
  t.is(Buffer.from(stream.push(Buffer.from('prompt> '))).toString(), 'prompt> ');
  t.is(Buffer.from(stream.push(Buffer.from('ghp_S3'))).toString(), '');
  t.is(Buffer.from(stream.flush()).toString(), '[REDACTED:GH_TOKEN]', 'six bytes of the secret, then the stream ended');
  const short = redactor.byteStream();
  t.is(Buffer.concat([short.push(Buffer.from('ok gh')), short.flush()]).toString(), 'ok gh');
});
