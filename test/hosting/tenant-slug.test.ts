import test from 'ava';
import { TENANT_SLUG, tenantSlug } from '../../src/hosting/tenants/disk/tenant-slug.js';

const HOSTILE = [
  '../../etc/passwd',
  '/',
  '.',
  '..',
  'a/../../b',
  'a\nb',
  'a\0b',
  '$(reboot)',
  ' ',
  '-rf',
  'x'.repeat(10_000),
  'ﬁle',
  '..\\..\\win',
  '\u202eevil',
];

test('every tenant name, however hostile, becomes one plain path component', (t) => {
  for (const name of HOSTILE) {
    const slug = tenantSlug(name);
    t.regex(slug, TENANT_SLUG, JSON.stringify(name));
    t.false(slug.includes('/') || slug.includes('.') || slug.startsWith('-'), slug);
  }
});

test('names that fold to the same letters still get different slugs', (t) => {
  const names = ['acme', 'Acme', 'ACME', 'a/cme', 'a cme', 'acme.', '..acme', 'acme\n'];
  const slugs = new Set(names.map(tenantSlug));
  t.is(slugs.size, names.length);
});

test('a slug is stable and keeps the readable part of the name', (t) => {
  t.is(tenantSlug('Acme Corp'), tenantSlug('Acme Corp'));
  t.true(tenantSlug('Acme Corp').startsWith('acme-corp-'));
  t.true(tenantSlug('../../etc').startsWith('etc-'));
  t.true(tenantSlug('///').startsWith('t-'));
});

test('an empty or non-string name is refused', (t) => {
  t.throws(() => tenantSlug(''), { instanceOf: TypeError });
  t.throws(() => tenantSlug(undefined as unknown as string), { instanceOf: TypeError });
});
