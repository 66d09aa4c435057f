"""Framing between the host (src/backends/docker/protocol.ts) and the supervisor.

Both directions use the same binary frame: a 9-byte big-endian header
(type: u8, call id: u32, payload length: u32) followed by the payload. Data
frames carry raw bytes; control frames carry UTF-8 JSON. Length prefixes keep
the framing cheap (no base64, no escaping), which is what lets a 256 MB flood
cross the container boundary at hundreds of MB/s.

Keep the constants in sync with src/backends/docker/protocol.ts.
"""

import os
import struct

HEADER = struct.Struct(">BII")
HEADER_SIZE = HEADER.size
PROTOCOL_VERSION = 1

# host -> supervisor
SPAWN = 0x01        # json: {command, cwd, env, mode, cols, rows, background, stdin}
STDIN = 0x02        # raw bytes for a pipes-mode call's stdin
STDIN_EOF = 0x03    # no payload: close the call's stdin
KILL = 0x04         # json: {graceMs}
SHUTDOWN = 0x05     # no payload: kill everything and exit

# supervisor -> host
READY = 0x81        # json: {version, pid, uid, gid, workspace}
SPAWNED = 0x82      # json: {pid, logPath?}
STDOUT = 0x83       # raw bytes (the merged stream in pty mode)
STDERR = 0x84       # raw bytes
EXIT = 0x85         # json: {exitCode, signal}; the call's last frame
SPAWN_FAILED = 0x86 # json: {message}; the call's last frame
LOG = 0x87          # json: {level, message}; diagnostics
REFUSED = 0x88      # json: {type, message}; sent instead of READY, then the supervisor exits
SKIPPED = 0x89      # json: {stream, bytes, lineFeeds, endsWithLineFeed}: output past the call's budget, dropped (output_budget.py)


class FrameReader:
    """Accumulates bytes and yields complete (type, call_id, payload) frames."""

    def __init__(self):
        self._buffer = bytearray()

    def feed(self, data):
        self._buffer += data

    def frames(self):
        buffer = self._buffer
        while len(buffer) >= HEADER_SIZE:
            kind, call_id, length = HEADER.unpack_from(buffer)
            end = HEADER_SIZE + length
            if len(buffer) < end:
                return
            payload = bytes(buffer[HEADER_SIZE:end])
            del buffer[:end]
            yield kind, call_id, payload


class FrameWriter:
    """Writes frames to a blocking fd; a frame is never interleaved with another."""

    def __init__(self, fd):
        self._fd = fd

    def send(self, kind, call_id, payload=b""):
        header = HEADER.pack(kind, call_id, len(payload))
        parts = [header, payload] if payload else [header]
        total = HEADER_SIZE + len(payload)
        written = os.writev(self._fd, parts)
        while written < total:
            # Partial write (large frame into a full pipe): finish it byte-exact.
            rest = (header + payload)[written:] if written < HEADER_SIZE else payload[written - HEADER_SIZE:]
            written += os.write(self._fd, rest)
