import test from 'ava';
import { FrameDecoder } from '../../../src/backends/docker/frame-decoder.js';
import { HEADER_SIZE, encodeFrame } from '../../../src/backends/docker/protocol.js';

function collect(): { decoder: FrameDecoder; frames: Array<{ type: number; callId: number; payload: string }> } {
  const frames: Array<{ type: number; callId: number; payload: string }> = [];
  const decoder = new FrameDecoder({
    headerSize: HEADER_SIZE,
    payloadLength: (header) => header.readUInt32BE(5),
    onFrame: (header, payload) => frames.push({ type: header.readUInt8(0), callId: header.readUInt32BE(1), payload: payload.toString() }),
  });
  return { decoder, frames };
}

const stream = Buffer.concat([encodeFrame(0x83, 1, Buffer.from('hello')), encodeFrame(0x85, 1), encodeFrame(0x84, 7, Buffer.from('x'.repeat(1000)))]);

test('decodes frames delivered in one chunk', (t) => {
  const { decoder, frames } = collect();
  decoder.push(stream);
  t.deepEqual(
    frames.map((f) => [f.type, f.callId, f.payload.length]),
    [
      [0x83, 1, 5],
      [0x85, 1, 0],
      [0x84, 7, 1000],
    ],
  );
  t.is(frames[0]?.payload, 'hello');
  t.is(decoder.buffered, 0);
});

test('decodes the same frames split at every byte boundary', (t) => {
  for (const size of [1, 2, 3, 8, 9, 10, 100]) {
    const { decoder, frames } = collect();
    for (let offset = 0; offset < stream.length; offset += size) decoder.push(stream.subarray(offset, offset + size));
    t.is(frames.length, 3, `chunk size ${size}`);
    t.is(frames[2]?.payload, 'x'.repeat(1000), `chunk size ${size}`);
  }
});

test('keeps a partial frame until the rest arrives', (t) => {
  const { decoder, frames } = collect();
  decoder.push(stream.subarray(0, 12));
  t.is(frames.length, 0);
  t.is(decoder.buffered, 12 - HEADER_SIZE);
  decoder.push(stream.subarray(12));
  t.is(frames.length, 3);
});
