/**
 * The wire format between the host and the in-container supervisor
 * (sandbox/supervisor/protocol.py; keep the two in sync). Every frame is a
 * 9-byte big-endian header (type u8, call id u32, payload length u32) and a
 * payload: raw bytes for data, UTF-8 JSON for control.
 */
import type { SpawnOptions } from '../backend.js';

export const PROTOCOL_VERSION = 1;
export const HEADER_SIZE = 9;

/** Frame types, host → supervisor. */
export const HostFrame = {
  SPAWN: 0x01,
  STDIN: 0x02,
  STDIN_EOF: 0x03,
  KILL: 0x04,
  SHUTDOWN: 0x05,
} as const;

/** Frame types, supervisor → host. */
export const SupervisorFrame = {
  READY: 0x81,
  SPAWNED: 0x82,
  STDOUT: 0x83,
  STDERR: 0x84,
  EXIT: 0x85,
  SPAWN_FAILED: 0x86,
  LOG: 0x87,
  /** Sent instead of READY when the supervisor refuses to start (then it exits): `{type, message}`. */
  REFUSED: 0x88,
  /** Output past the call's `outputBudget`, dropped: `{stream, bytes, lineFeeds, endsWithLineFeed}` (sandbox/supervisor/output_budget.py). */
  SKIPPED: 0x89,
} as const;

/** What the supervisor needs to start one command: the spawn options, with stdin as a flag (the bytes follow as frames). */
export interface SpawnRequest extends Omit<SpawnOptions, 'stdin' | 'background'> {
  /** True when STDIN frames follow (pipes mode); otherwise stdin is /dev/null. */
  stdin: boolean;
  background: boolean;
  /** File name (no slashes) of a background call's log in the log folder. */
  logName?: string;
}

/** The supervisor's hello, sent once it is ready for SPAWN frames. */
export interface ReadyInfo {
  version: number;
  pid: number;
  uid: number;
  gid: number;
  workspace: string;
}

/** Largest STDIN frame the host sends; bigger payloads are split. */
export const STDIN_CHUNK = 1 << 20;

/** Encodes one frame. */
export function encodeFrame(type: number, callId: number, payload?: Uint8Array): Buffer {
  const length = payload?.length ?? 0;
  const frame = Buffer.allocUnsafe(HEADER_SIZE + length);
  frame.writeUInt8(type, 0);
  frame.writeUInt32BE(callId, 1);
  frame.writeUInt32BE(length, 5);
  if (payload && length > 0) frame.set(payload, HEADER_SIZE);
  return frame;
}

/** Encodes a control frame whose payload is JSON. */
export function encodeJsonFrame(type: number, callId: number, value: unknown): Buffer {
  return encodeFrame(type, callId, Buffer.from(JSON.stringify(value), 'utf8'));
}
