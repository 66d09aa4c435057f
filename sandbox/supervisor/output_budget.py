"""The output a call may send to the host, and what happens to the rest.

Every byte a command writes crosses the engine (dockerd, the container's
shim) and the host's shell thread, none of which run in the tenant's cgroup:
a command that floods its output makes the host do several times the work
the command itself does, on CPU no limit of the container accounts for. The
host renders only the first bytes of an output anyway (shell maxOutputBytes,
or the saved-output cap) and keeps the end; so it tells the supervisor how
many bytes to forward (`outputBudget.forwardBytes`, across the call's
streams) and how much of each stream's end it keeps (`tailBytes`). Past the
budget the supervisor only counts bytes and line feeds, on the command's own
CPU share, keeps each stream's last `tailBytes`, and reports the count in
SKIPPED frames (at most every REPORT_INTERVAL, so the host sees the command
is alive and how much it wrote). When the stream ends, the count of what was
dropped goes first and the kept end follows as ordinary output: the host
sees the stream whole but for a hole whose size and line count it knows.
"""

import time

REPORT_INTERVAL = 0.25
# Past the budget, bytes are read in bigger pieces: fewer syscalls per byte dropped.
SKIP_READ_SIZE = 1 << 20


class OutputBudget:
    """Bytes a call may still forward, across its streams; disabled when the request has no budget (an older host)."""

    def __init__(self, spec):
        budget = spec.get("outputBudget") if isinstance(spec, dict) else None
        self.enabled = isinstance(budget, dict)
        self.left = _non_negative(budget, "forwardBytes") if self.enabled else 0
        self.tail_bytes = _non_negative(budget, "tailBytes") if self.enabled else 0
        # Past the budget, bytes drained per second (0: as fast as they come): a slow reader
        # blocks the writer, so a flood costs nobody CPU, not even the kernel's terminal work.
        self.drain_rate = _non_negative(budget, "drainBytesPerSecond", 0) if self.enabled else 0

    def split(self, data):
        """(bytes to forward, bytes past the budget) of a chunk read from the command."""
        if not self.enabled:
            return data, b""
        if self.left >= len(data):
            self.left -= len(data)
            return data, b""
        forward = data[: self.left]
        self.left = 0
        return forward, data[len(forward):]


class SkippedStream:
    """One stream's bytes past the budget: counted, and the last `tail_bytes` kept."""

    def __init__(self, tail_bytes, drain_rate=0, now=None):
        self.tail_bytes = tail_bytes
        self.tail = bytearray()
        self.bytes = 0
        self.line_feeds = 0
        self.ends_with_line_feed = False
        self.reported_at = time.monotonic() if now is None else now
        self.drain_rate = drain_rate
        self.drained = 0
        self.started_at = self.reported_at

    def resume_at(self):
        """When the stream may be read again, to drain at `drain_rate` on average (None: now)."""
        if self.drain_rate <= 0:
            return None
        return self.started_at + self.drained / self.drain_rate

    def take(self, data):
        if not data:
            return
        self.drained += len(data)
        if self.tail_bytes == 0:
            self._drop(data, len(data))
            return
        combined = self.tail + data
        cut = len(combined) - self.tail_bytes
        if cut > 0:
            self._drop(combined, cut)
            del combined[:cut]
        self.tail = combined

    def _drop(self, buffer, end):
        self.bytes += end
        self.line_feeds += buffer.count(b"\n", 0, end)
        self.ends_with_line_feed = buffer[end - 1] == 0x0A

    def due(self, now):
        return self.bytes > 0 and now - self.reported_at >= REPORT_INTERVAL

    def report(self, now=None):
        """The dropped count since the last report (None when nothing was dropped), and a fresh count."""
        self.reported_at = time.monotonic() if now is None else now
        if self.bytes == 0:
            return None
        report = {"bytes": self.bytes, "lineFeeds": self.line_feeds, "endsWithLineFeed": self.ends_with_line_feed}
        self.bytes = 0
        self.line_feeds = 0
        return report

    def take_tail(self):
        tail, self.tail = bytes(self.tail), bytearray()
        return tail


def _non_negative(budget, field, default=None):
    value = budget.get(field, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"outputBudget.{field} must be a non-negative integer")
    return value
