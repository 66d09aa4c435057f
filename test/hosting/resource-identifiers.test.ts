import test from 'ava';
import { audienceProblem, parsePublicUrl } from '../../src/hosting/auth/oidc/resource-identifiers.js';

test('an audience is any plain string, or a URI when it holds a colon', (t) => {
  for (const good of ['toolcell', 'my tool cell', 'urn:example:toolcell', 'https://tools.example/mcp', 'api://toolcell', 'toolcell-prod_2']) {
    t.is(audienceProblem(good), undefined, good);
  }
  for (const [bad, problem] of [
    ['', /empty/],
    ['a b:c', /must be a URI/],
    [':x', /must be a URI/],
    ['1urn:x', /must be a URI/],
    ['https://[::1', /must be a URI/],
    ['tool\u0000cell', /control character/],
    ['toolcell\n', /control character/],
    [' toolcell', /white space/],
    ['x'.repeat(2049), /longer than 2048/],
  ] as const) {
    t.regex(audienceProblem(bad) ?? 'accepted', problem, JSON.stringify(bad));
  }
});

test('a public URL is the https base clients use; the resource is it plus /mcp', (t) => {
  t.deepEqual(parsePublicUrl('https://tools.example', '--public-url'), {
    base: 'https://tools.example',
    resource: 'https://tools.example/mcp',
    hostname: 'tools.example',
  });
  t.deepEqual(parsePublicUrl('https://Tools.Example:8443/toolcell/', '--public-url'), {
    base: 'https://tools.example:8443/toolcell',
    resource: 'https://tools.example:8443/toolcell/mcp',
    hostname: 'tools.example',
  });
  t.is(parsePublicUrl('http://127.0.0.1:8080', '--public-url').resource, 'http://127.0.0.1:8080/mcp');
  t.is(parsePublicUrl('http://[::1]:8080', '--public-url').hostname, '::1');
  t.is(parsePublicUrl('http://localhost:8080', '--public-url').hostname, 'localhost');
});

test('a public URL that clients could not use, or that is not one, is refused naming the flag', (t) => {
  for (const [bad, problem] of [
    ['tools.example', /not an absolute URL/],
    ['', /not an absolute URL/],
    ['ftp://tools.example', /https:\/\//],
    ['http://tools.example', /http:\/\/ only for a loopback address/],
    ['http://10.0.0.5:8080', /http:\/\/ only for a loopback address/],
    ['https://tools.example/mcp', /without \/mcp/],
    ['https://u:p@tools.example', /user name or password/],
    ['https://tools.example/?', /query or a fragment/],
    ['https://tools.example/#top', /query or a fragment/],
  ] as const) {
    t.throws(() => parsePublicUrl(bad, '--public-url'), { instanceOf: TypeError, message: new RegExp(`^--public-url .*${problem.source}`) }, bad);
  }
});
