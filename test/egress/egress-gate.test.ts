import test from 'ava';
import { EgressGate } from '../../src/egress/egress-gate.js';
import { mapResolver } from '../../src/egress/resolver.js';

const resolver = mapResolver({
  'allowed.test': '93.184.216.34',
  'files.mirror.test': ['2606:4700::6810:84e5'],
  'loopback.allowed.test': '127.0.0.1',
  'metadata.allowed.test': '169.254.169.254',
  'v6metadata.allowed.test': 'fd00:ec2::254',
  'mapped.allowed.test': '::ffff:127.0.0.1',
  'cgnat.allowed.test': '100.100.100.200',
  'mixed.allowed.test': ['10.0.0.8', '93.184.216.35'],
  'internal.allowed.test': '10.9.0.4',
});
const gate = new EgressGate({ allow: ['allowed.test', '*.allowed.test', '*.mirror.test', '10.9.0.0/24', '198.51.100.9:8080'], resolver });

test('a listed name resolving to a public address is allowed, pinned to that address', async (t) => {
  t.like(await gate.decide('allowed.test', 443), { allowed: true, address: '93.184.216.34', entry: 'allowed.test' });
  t.like(await gate.decide('files.mirror.test', 80), { allowed: true, address: '2606:4700::6810:84e5', entry: '*.mirror.test' });
});

test('an unlisted name, or a listed one on another port, is refused before any lookup', async (t) => {
  t.like(await gate.decide('denied.test', 443), { allowed: false, reason: 'not in sandbox.network.allow' });
  t.like(await gate.decide('allowed.test', 22), { allowed: false, reason: 'not in sandbox.network.allow' });
});

test('a listed name resolving to loopback, metadata, CGNAT or IPv4-mapped loopback is refused', async (t) => {
  for (const [name, range] of [
    ['loopback.allowed.test', 'loopback'],
    ['metadata.allowed.test', 'linkLocal'],
    ['v6metadata.allowed.test', 'uniqueLocal'],
    ['mapped.allowed.test', 'loopback'],
    ['cgnat.allowed.test', 'carrierGradeNat'],
  ]) {
    const decision = await gate.decide(name!, 443);
    t.false(decision.allowed, name);
    t.true(!decision.allowed && decision.reason.includes(`(${range})`), `${name}: ${JSON.stringify(decision)}`);
  }
});

test('a name resolving to private and public addresses connects to the public one only', async (t) => {
  t.like(await gate.decide('mixed.allowed.test', 443), { allowed: true, address: '93.184.216.35' });
});

test('a private address is reachable by name when its range is itself listed', async (t) => {
  t.like(await gate.decide('internal.allowed.test', 443), { allowed: true, address: '10.9.0.4' });
});

test('IP literals pass only when listed, whatever their range', async (t) => {
  t.like(await gate.decide('198.51.100.9', 8080), { allowed: true, address: '198.51.100.9' });
  t.like(await gate.decide('198.51.100.9', 443), { allowed: false });
  t.like(await gate.decide('93.184.216.34', 443), { allowed: false, reason: 'IP address not in sandbox.network.allow' });
  t.like(await gate.decide('169.254.169.254', 80), { allowed: false });
  t.like(await gate.decide('10.9.0.4', 443), { allowed: true });
  t.like(await gate.decide('::ffff:10.9.0.4', 443), { allowed: true, address: '10.9.0.4' });
});

test('numeric host forms and malformed names are refused, never resolved as addresses', async (t) => {
  for (const host of ['2130706433', '0x7f000001', '127.1', 'allowed.test@evil.test', 'allowed.test evil', '', 'a'.repeat(300)]) {
    t.false((await gate.decide(host, 443)).allowed, host);
  }
  t.like(await gate.decide('allowed.test', 0), { allowed: false, reason: 'invalid port' });
  t.like(await gate.decide('allowed.test', 70000), { allowed: false, reason: 'invalid port' });
});

test('a listed name that does not resolve is refused with the lookup error', async (t) => {
  const decision = await gate.decide('nowhere.allowed.test', 443);
  t.like(decision, { allowed: false, reason: 'does not resolve (ENOTFOUND)' });
});
