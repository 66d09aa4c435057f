import test from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EgressEvent } from '../../src/egress/egress-event.js';
import { EgressLog } from '../../src/egress/egress-log.js';

async function logPath(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolcell-egress-log-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'nested', 'egress.jsonl');
}

const refused = (host: string, client = '10.0.0.2'): EgressEvent => ({
  time: new Date().toISOString(),
  client,
  action: 'refused',
  via: 'connect',
  host,
  port: 443,
  reason: 'not in sandbox.network.allow',
});

async function lines(path: string): Promise<EgressEvent[]> {
  return (await readFile(path, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as EgressEvent);
}

test('repeats of one destination are one line and one count record; every connection is accounted for', async (t) => {
  const path = await logPath(t);
  const log = new EgressLog({ path, intervalMs: 3_600_000 });
  for (let i = 0; i < 20_000; i++) log.write(refused('blocked.test', `10.0.0.${2 + (i % 3)}`));
  log.write({ ...refused('allowed.test'), action: 'allowed', address: '192.0.2.1', entry: 'allowed.test', reason: undefined as never });
  await log.close();
  const written = await lines(path);
  t.is(written.length, 3);
  t.like(written[0], { host: 'blocked.test', action: 'refused', client: '10.0.0.2' });
  t.like(written[2], { host: 'blocked.test', count: 19_999 });
  t.truthy(written[2]!.since && written[2]!.until);
  t.like(log.volume, { lines: 3, counted: 19_999 });
});

test('past maxDestinations, other destinations are counted together in a * line; hostile host names stay one bounded line', async (t) => {
  const path = await logPath(t);
  const log = new EgressLog({ path, intervalMs: 3_600_000, maxDestinations: 10 });
  for (let i = 0; i < 5000; i++) log.write(refused(`h${i}.${'x'.repeat(5000)}\u2028{"forged":1}`));
  await log.close();
  const text = await readFile(path, 'utf8');
  t.false(/[\u2028\u2029\u0085]/.test(text), 'no raw line separator');
  const written = await lines(path);
  t.is(written.length, 11);
  t.true(text.split('\n').every((line) => Buffer.byteLength(line) < 4096));
  t.like(written[10], { host: '*', port: 0, count: 4990 });
  t.regex(written[10]!.reason!, /10 or more other destinations/);
});
