"""The frame reader and writer against the golden frames the TypeScript end
also decodes (test/backends/docker/protocol-golden.test.ts)."""

import json
import os

import protocol as P
import reaper


def _payload(frame):
    return bytes.fromhex(frame["hex"])[P.HEADER_SIZE:]


def test_constants_match_the_golden_file(golden):
    assert P.PROTOCOL_VERSION == golden["protocolVersion"]
    assert P.HEADER_SIZE == golden["headerSize"]
    for name, value in golden["types"].items():
        assert getattr(P, name) == value, name
    # The grace a KILL frame without one gets; the host's default is the same (src/contracts/defaults.ts).
    assert reaper.DEFAULT_GRACE_MS == golden["defaults"]["killGraceMs"]


def test_each_golden_frame_decodes_alone(golden):
    for frame in golden["frames"]:
        reader = P.FrameReader()
        reader.feed(bytes.fromhex(frame["hex"]))
        frames = list(reader.frames())
        assert len(frames) == 1, frame["name"]
        kind, call_id, payload = frames[0]
        assert kind == golden["types"][frame["type"]], frame["name"]
        assert call_id == frame["callId"], frame["name"]
        if "json" in frame:
            assert json.loads(payload) == frame["json"], frame["name"]
        else:
            assert payload == bytes.fromhex(frame["payloadHex"]), frame["name"]


def test_the_whole_stream_decodes_in_any_chunking(golden):
    stream = b"".join(bytes.fromhex(frame["hex"]) for frame in golden["frames"])
    expected = [(golden["types"][f["type"]], f["callId"], _payload(f)) for f in golden["frames"]]
    for size in (1, 2, 7, 9, 10, 64, len(stream)):
        reader = P.FrameReader()
        decoded = []
        for offset in range(0, len(stream), size):
            reader.feed(stream[offset:offset + size])
            decoded.extend(reader.frames())
        assert decoded == expected, f"chunks of {size} bytes"


def test_an_incomplete_frame_waits_for_the_rest(golden):
    data = bytes.fromhex(golden["frames"][0]["hex"])
    reader = P.FrameReader()
    reader.feed(data[:-1])
    assert list(reader.frames()) == []
    reader.feed(data[-1:])
    assert len(list(reader.frames())) == 1


def test_the_writer_produces_the_golden_bytes(golden):
    for frame in golden["frames"]:
        payload = _payload(frame)
        read_end, write_end = os.pipe()
        try:
            P.FrameWriter(write_end).send(golden["types"][frame["type"]], frame["callId"], payload)
            os.close(write_end)
            write_end = None
            written = b""
            while chunk := os.read(read_end, 1 << 16):
                written += chunk
        finally:
            os.close(read_end)
            if write_end is not None:
                os.close(write_end)
        assert written == bytes.fromhex(frame["hex"]), frame["name"]


def test_a_partial_write_is_finished_byte_exact():
    """A frame bigger than the pipe's buffer is written in several parts."""
    payload = bytes(range(256)) * 4096  # 1 MiB, past a pipe's 64 KiB
    read_end, write_end = os.pipe()
    received = bytearray()
    pid = os.fork()
    if pid == 0:  # the reader drains the pipe while the writer blocks
        os.close(write_end)
        while chunk := os.read(read_end, 1 << 16):
            received += chunk
        reader = P.FrameReader()
        reader.feed(bytes(received))
        frames = list(reader.frames())
        os._exit(0 if frames == [(P.STDOUT, 9, payload)] else 1)
    os.close(read_end)
    P.FrameWriter(write_end).send(P.STDOUT, 9, payload)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
