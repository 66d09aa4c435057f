import test from 'ava';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonlFileSink } from '../../src/telemetry/jsonl-sink.js';

test('appends one JSON line per event, creating the folder', async (t) => {
  const path = join(mkdtempSync(join(tmpdir(), 'toolcell-tel-')), 'nested', 'calls.jsonl');
  const sink = new JsonlFileSink({ path });
  const event = {
    event: 'tool_call' as const,
    timestamp: 'now',
    callId: 'c',
    tool: 't',
    durationMs: 3,
    decision: 'auto' as const,
    outcome: 'success' as const,
  };
  sink.record(event);
  sink.record({ ...event, callId: 'd' });
  await sink.close();
  const lines = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.deepEqual(
    lines.map((l) => l.callId),
    ['c', 'd'],
  );
});

test('a bad path option is a TypeError naming it', (t) => {
  t.throws(() => new JsonlFileSink({ path: '' }), { instanceOf: TypeError, message: /options\.path/ });
});
