import test from 'ava';
import ipaddr from 'ipaddr.js';
import { AllowList, parseAddress } from '../../src/egress/allow-list.js';

const list = new AllowList(['registry.npmjs.org', '*.pythonhosted.org', 'github.com:443', '10.1.0.0/16', '192.0.2.7:8080', '[fd00::5]:8443', '2001:db8::/32']);

test('a host name entry lets that name through on ports 80 and 443 only', (t) => {
  t.is(list.entryForName('registry.npmjs.org', 443), 'registry.npmjs.org');
  t.is(list.entryForName('registry.npmjs.org', 80), 'registry.npmjs.org');
  t.is(list.entryForName('registry.npmjs.org', 22), undefined);
  t.is(list.entryForName('evil.registry.npmjs.org', 443), undefined);
  t.is(list.entryForName('registry.npmjs.org.evil.test', 443), undefined);
});

test('*.domain covers names under the domain, not the domain itself nor look-alike suffixes', (t) => {
  t.is(list.entryForName('files.pythonhosted.org', 443), '*.pythonhosted.org');
  t.is(list.entryForName('a.b.pythonhosted.org', 443), '*.pythonhosted.org');
  t.is(list.entryForName('pythonhosted.org', 443), undefined);
  t.is(list.entryForName('evilpythonhosted.org', 443), undefined);
});

test('a port on an entry replaces the default ports', (t) => {
  t.is(list.entryForName('github.com', 443), 'github.com:443');
  t.is(list.entryForName('github.com', 80), undefined);
});

test('IP and CIDR entries match addresses, IPv6 included, with their ports', (t) => {
  t.is(list.entryForAddress(ipaddr.parse('10.1.200.3'), 443), '10.1.0.0/16');
  t.is(list.entryForAddress(ipaddr.parse('10.2.0.1'), 443), undefined);
  t.is(list.entryForAddress(ipaddr.parse('192.0.2.7'), 8080), '192.0.2.7:8080');
  t.is(list.entryForAddress(ipaddr.parse('192.0.2.7'), 443), undefined);
  t.is(list.entryForAddress(ipaddr.parse('fd00::5'), 8443), '[fd00::5]:8443');
  t.is(list.entryForAddress(ipaddr.parse('2001:db8:1::9'), 80), '2001:db8::/32');
  t.is(list.entryForAddress(ipaddr.parse('10.1.200.3')), '10.1.0.0/16', 'any port when none is asked');
});

test('IP literals are parsed strictly: IPv4-mapped IPv6 becomes IPv4; shorthand and hex forms are not addresses', (t) => {
  t.is(parseAddress('::ffff:127.0.0.1')?.toString(), '127.0.0.1');
  t.is(parseAddress('[::1]')?.toString(), '::1');
  t.is(parseAddress('127.1'), undefined);
  t.is(parseAddress('0x7f.0.0.1'), undefined);
  t.is(parseAddress('2130706433'), undefined);
  t.is(parseAddress('example.com'), undefined);
});

test('names are compared case-insensitively and without a trailing dot', (t) => {
  const mixed = new AllowList(['Registry.NPMjs.org.']);
  t.is(mixed.entryForName('registry.npmjs.org', 443), 'Registry.NPMjs.org.');
});

test('a bad entry is refused with its text named', (t) => {
  for (const [entry, words] of [
    ['*.org', /\*\.<domain with a dot>/],
    ['exa mple.com', /not a host name/],
    ['example.com:0', /invalid port "0"/],
    ['example.com:99999', /invalid port/],
    ['example.com:http', /invalid port/],
    ['10.0.0.0/33', /not a valid CIDR range/],
    ['', /not a host name/],
    ['http://example.com', /is a URL; an entry is a host name with an optional :port, not a URL \(for this URL: "example\.com:80"\)/],
    ['https://Example.com/some/path?q=1', /is a URL.*"example\.com:443"/],
    ['http://example.com:8080/', /is a URL.*"example\.com:8080"/],
    ['https://user:pw@[fd00::5]:8443/x', /is a URL.*"\[fd00::5\]:8443"/],
    ['example.com/path', /has a path; an entry is a host name with an optional :port \(here: "example\.com"\)/],
  ] as const) {
    const error = t.throws(() => new AllowList([entry]), { instanceOf: TypeError });
    t.regex(error.message, words, entry);
    t.true(error.message.includes(`"${entry}"`), entry);
    if (/[a-z]\//i.test(entry)) t.notRegex(error.message, /invalid port|CIDR/, entry);
  }
});
