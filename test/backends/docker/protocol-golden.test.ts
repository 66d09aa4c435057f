/**
 * The host end of the supervisor protocol against the golden frames that
 * the Python end decodes too (test/supervisor/test_protocol.py): both read
 * test/fixtures/supervisor-frames.json, so a change to either end that the
 * other does not share fails one of them.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { PassThrough, Duplex } from 'node:stream';
import { FrameDecoder } from '../../../src/backends/docker/frame-decoder.js';
import { HEADER_SIZE, HostFrame, PROTOCOL_VERSION, SupervisorFrame, encodeFrame, encodeJsonFrame } from '../../../src/backends/docker/protocol.js';
import { SupervisorConnection } from '../../../src/backends/docker/supervisor-connection.js';
import { isToolcellError } from '../../../src/errors.js';
import { DEFAULT_KILL_GRACE_MS } from '../../../src/contracts/defaults.js';

interface GoldenFrame {
  name: string;
  direction: 'host' | 'supervisor';
  type: string;
  callId: number;
  hex: string;
  json?: unknown;
  payloadHex?: string;
}

interface Golden {
  protocolVersion: number;
  headerSize: number;
  defaults: { killGraceMs: number };
  types: Record<string, number>;
  frames: GoldenFrame[];
}

const golden = JSON.parse(readFileSync(new URL('../../../../test/fixtures/supervisor-frames.json', import.meta.url), 'utf8')) as Golden;
const typeOf = (frame: GoldenFrame): number => golden.types[frame.type]!;
const bytes = (frame: GoldenFrame): Buffer => Buffer.from(frame.hex, 'hex');

test('the constants are the golden file’s', (t) => {
  t.is(PROTOCOL_VERSION, golden.protocolVersion);
  t.is(HEADER_SIZE, golden.headerSize);
  t.deepEqual({ ...HostFrame, ...SupervisorFrame }, golden.types);
  t.is(DEFAULT_KILL_GRACE_MS, golden.defaults.killGraceMs, 'the supervisor uses the same grace for a KILL frame without one');
});

test('host frames encode to the golden bytes', (t) => {
  for (const frame of golden.frames.filter((f) => f.direction === 'host')) {
    const encoded =
      frame.json !== undefined
        ? encodeJsonFrame(typeOf(frame), frame.callId, frame.json)
        : encodeFrame(typeOf(frame), frame.callId, Buffer.from(frame.payloadHex ?? '', 'hex'));
    t.is(encoded.toString('hex'), frame.hex, frame.name);
  }
});

test('the golden stream decodes to its frames in any chunking', (t) => {
  const stream = Buffer.concat(golden.frames.map(bytes));
  for (const size of [1, 2, 7, 9, 10, 64, stream.length]) {
    const decoded: Array<{ type: number; callId: number; payload: string }> = [];
    const decoder = new FrameDecoder({
      headerSize: HEADER_SIZE,
      payloadLength: (header) => header.readUInt32BE(5),
      onFrame: (header, payload) => decoded.push({ type: header.readUInt8(0), callId: header.readUInt32BE(1), payload: payload.toString('hex') }),
    });
    for (let offset = 0; offset < stream.length; offset += size) decoder.push(stream.subarray(offset, offset + size));
    t.deepEqual(
      decoded,
      golden.frames.map((f) => ({ type: typeOf(f), callId: f.callId, payload: bytes(f).subarray(HEADER_SIZE).toString('hex') })),
      `chunks of ${size} bytes`,
    );
    t.is(decoder.buffered, 0);
  }
});

/** Docker's attach multiplexing around supervisor bytes, as the engine sends stdout. */
function dockerStdout(payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt8(1, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

/** A connection whose incoming side we write; what it sends is discarded. */
function connectionOver(options: ConstructorParameters<typeof SupervisorConnection>[1] = {}): {
  connection: SupervisorConnection;
  receive: (frame: Buffer) => void;
} {
  const incoming = new PassThrough();
  const stream = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() });
  incoming.on('data', (chunk: Buffer) => stream.push(chunk));
  return { connection: new SupervisorConnection(stream, options), receive: (frame) => incoming.write(dockerStdout(frame)) };
}

const frameNamed = (name: string): GoldenFrame => golden.frames.find((f) => f.name === name)!;

test('the connection reads the golden READY (with its ACL report) and routes LOG frames to onLog', async (t) => {
  const logs: Array<{ level: string; message: string }> = [];
  const { connection, receive } = connectionOver({ onLog: (entry) => logs.push(entry) });
  receive(bytes(frameNamed('ready with ACL errors')));
  t.deepEqual(await connection.ready, frameNamed('ready with ACL errors').json as object);
  receive(bytes(frameNamed('diagnostic')));
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(logs, [frameNamed('diagnostic').json as { level: string; message: string }]);
  connection.destroy();
});

test('a supervisor of another protocol version is refused, with the way out', async (t) => {
  const { connection, receive } = connectionOver();
  const ready = frameNamed('ready with ACL errors').json as Record<string, unknown>;
  receive(encodeJsonFrame(SupervisorFrame.READY, 0, { ...ready, version: PROTOCOL_VERSION + 1 }));
  const error = await t.throwsAsync(connection.ready);
  t.true(isToolcellError(error));
  t.is((error as { code?: string }).code, 'sandbox_unavailable');
  t.regex(error!.message, /speaks protocol version 2, this toolcell speaks version 1: rebuild the image with `toolcell sandbox build`/);
  connection.destroy();
});
