"""One call as the supervisor sees it: its stdio, its reaper, its frames.

A call ends with exactly one EXIT frame, sent once the reaper says nothing of
the call is left ("done") and every output fd has reached EOF (or the drain
timeout passed), so the host receives all output before the exit status.
A call that could not start ends with SPAWN_FAILED instead. Either way its
reaper goes back to the supervisor's idle set, unless it died.

Kill watchdog: a reaper that has not finished a kill within the grace period
plus KILL_WATCHDOG seconds (say it was stopped by a signal) is SIGKILLed; its
orphans come to the supervisor (or, where reapers are no subreapers, to
init), which kills them as strays.
"""

import collections
import json
import os
import selectors
import signal
import time

import fdchannel
import protocol as P
import proctree
from output_budget import SKIP_READ_SIZE, OutputBudget, SkippedStream

DRAIN_TIMEOUT = 1.0
KILL_WATCHDOG = 2.0
BACKGROUND_QUOTA_WINDOW = 600.0  # a background job may grow the workspace by the limit per window
READ_SIZE = 1 << 16
FRAME_BUDGET = 1 << 18  # bytes gathered from one fd into one frame


class Call:
    def __init__(self, call_id, spec, supervisor, stdio, outputs, stdin_fd, budget=None):
        self.id = call_id
        self.spec = spec
        self.budget = budget or OutputBudget({})
        self.skipped = {}  # fd -> SkippedStream, once the budget is spent (output_budget.py)
        self.paused = {}  # fd -> when to read it again: past the budget, drained at the budget's rate
        self.sup = supervisor
        self.stdio = stdio
        self.outputs = dict(outputs)
        self.stdin_fd = stdin_fd
        self.stdin_queue = collections.deque()
        self.stdin_closing = False
        self.stdin_registered = False
        self.reaper_pid = None
        self.group = None  # the call group, when the reaper is no subreaper (proctree.py)
        self.sock = None
        self.status_buffer = b""
        self.started = False
        self.exit = None
        self.tree_done = False
        self.drain_deadline = None
        self.kill_deadline = None
        self.finished = False
        self.quota_base = None  # workspace filesystem sample at start (see quota.py)
        self.quota_window_end = None  # background calls: when the allowance renews
        self.quota_last = None  # the previous sample: rises since it raise the baseline (quota.py, step 3)
        self.quota_killed = False

    # -- start ---------------------------------------------------------------
    def start(self, reaper_pid, sock):
        """Hands the request and the command's stdio to an idle reaper."""
        self.reaper_pid = reaper_pid
        self.sock = sock
        stdio, self.stdio = self.stdio, None
        try:
            fdchannel.send(sock, {"t": "spawn", "spec": self.spec}, stdio or ())
        finally:
            for fd in set(stdio or ()):
                os.close(fd)
        if self.sup.quota.enabled:
            self.quota_base = self.quota_last = self.sup.quota.sample()
            self.sup.quota_started(self)
            if self.spec.get("background"):
                self.quota_window_end = time.monotonic() + BACKGROUND_QUOTA_WINDOW
        selector = self.sup.selector
        selector.register(sock.fileno(), selectors.EVENT_READ, (self, "status"))
        for fd in self.outputs:
            selector.register(fd, selectors.EVENT_READ, (self, "out"))

    def abandon(self, message):
        """Ends a call that never reached a reaper."""
        for fd in [*set(self.stdio or ()), *self.outputs, self.stdin_fd]:
            if fd is not None:
                os.close(fd)
        self.stdio = None
        self.outputs = {}
        self.stdin_fd = None
        self.finished = True
        self.sup.send_json(P.SPAWN_FAILED, self.id, {"message": message})
        self.sup.forget(self)

    # -- events --------------------------------------------------------------
    def on_event(self, fd, role, mask):
        # An event of this select() batch may concern an fd closed (and even
        # reused) by an earlier event of the same batch: check it is ours.
        if role == "out" and fd in self.outputs:
            self.read_output(fd)
        elif role == "status" and self.sock is not None and fd == self.sock.fileno():
            self.read_status()
        elif role == "stdin" and fd == self.stdin_fd:
            self.flush_stdin()

    def on_tick(self, now):
        for fd, resume in list(self.paused.items()):
            if now >= resume:
                del self.paused[fd]
                self.sup.selector.register(fd, selectors.EVENT_READ, (self, "out"))
        for fd, skipped in list(self.skipped.items()):
            if skipped.due(now):
                self.report_skipped(fd, now)
        if self.drain_deadline is not None and now >= self.drain_deadline:
            self.finish(force=True)
        elif self.kill_deadline is not None and now >= self.kill_deadline and not self.tree_done:
            self.kill_deadline = None
            self.sup.log("error", f"call {self.id}: reaper {self.reaper_pid} did not finish a kill; killing it")
            try:
                os.kill(self.reaper_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def read_output(self, fd, drain=False):
        skipped = self.skipped.get(fd)
        read_size = SKIP_READ_SIZE if skipped else READ_SIZE
        chunks, size, eof = [], 0, False
        while size < (FRAME_BUDGET if not skipped else SKIP_READ_SIZE * 4) or drain:
            try:
                data = os.read(fd, read_size)
            except BlockingIOError:
                break
            except OSError:  # EIO: every holder of the pty slave is gone
                data = b""
            if not data:
                eof = True
                break
            chunks.append(data)
            size += len(data)
        if chunks:
            self.forward(fd, b"".join(chunks))
        if eof or drain:
            self.end_skipped(fd)
            self.unwatch(fd)
            os.close(fd)
            del self.outputs[fd]
            self.maybe_finish()

    def forward(self, fd, data):
        """Sends what the budget allows; counts the rest (output_budget.py)."""
        forward, rest = self.budget.split(data)
        if forward:
            self.sup.send(self.outputs[fd], self.id, forward)
        if rest:
            skipped = self.skipped.get(fd)
            if skipped is None:
                skipped = self.skipped[fd] = SkippedStream(self.budget.tail_bytes, self.budget.drain_rate)
            skipped.take(rest)
            now = time.monotonic()
            resume = skipped.resume_at()
            if skipped.due(now):
                self.report_skipped(fd, now)
            if resume is not None and resume > now and fd not in self.paused:
                # Not read until then: the writer blocks on a full pipe or terminal.
                self.sup.selector.unregister(fd)
                self.paused[fd] = resume

    def unwatch(self, fd):
        if self.paused.pop(fd, None) is None:
            self.sup.selector.unregister(fd)

    def next_deadline(self):
        """The earliest time a paused stream is to be read again, or None."""
        return min(self.paused.values(), default=None)

    def report_skipped(self, fd, now=None):
        report = self.skipped[fd].report(now)
        if report is not None:
            report["stream"] = "stdout" if self.outputs[fd] == P.STDOUT else "stderr"
            self.sup.send_json(P.SKIPPED, self.id, report)

    def end_skipped(self, fd):
        """At a stream's end: what was dropped, then the kept end as ordinary output."""
        if fd not in self.skipped:
            return
        self.report_skipped(fd)
        tail = self.skipped.pop(fd).take_tail()
        if tail:
            self.sup.send(self.outputs[fd], self.id, tail)

    def read_status(self):
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, BlockingIOError):
            data = b""
        if not data:
            self.on_reaper_lost()
            return
        self.status_buffer += data
        while b"\n" in self.status_buffer and self.sock is not None:
            line, self.status_buffer = self.status_buffer.split(b"\n", 1)
            self.on_status(json.loads(line))

    def on_status(self, message):
        kind = message.get("t")
        if kind == "started":
            self.started = True
            self.group = message.get("group")
            reply = {"pid": message["pid"]}
            if "logPath" in self.spec:
                reply["logPath"] = self.spec["logPath"]
            self.sup.send_json(P.SPAWNED, self.id, reply)
        elif kind == "failed":
            if self.started:
                self.sup.log("error", f"call {self.id}: {message.get('message')}")
                return
            self.sup.send_json(P.SPAWN_FAILED, self.id, {"message": message.get("message", "spawn failed")})
            self.finished = True
            self.tree_done = True  # nothing ran: the reaper is idle again
            self.cleanup()
        elif kind == "exited":
            self.exit = {"exitCode": message.get("exitCode"), "signal": message.get("signal")}
        elif kind == "done":
            self.tree_done = True
            self.kill_deadline = None
            self.drain_deadline = time.monotonic() + DRAIN_TIMEOUT
            self.maybe_finish()

    def on_reaper_lost(self):
        """The reaper died (or was killed by the watchdog): kill what it left behind."""
        self.sup.selector.unregister(self.sock.fileno())
        self.sock.close()
        self.sock = None
        if self.finished:
            return
        self.sup.log("error", f"call {self.id}: its reaper exited unexpectedly")
        # Its call group too: where reapers are no subreapers, the orphans went to init, not to us.
        proctree.kill_strays(os.getpid(), self.sup.managed_pids() - {self.reaper_pid}, proctree.call_group(self.reaper_pid))
        self.tree_done = True
        self.kill_deadline = None
        self.drain_deadline = time.monotonic() + DRAIN_TIMEOUT
        if self.exit is None:
            self.exit = {"exitCode": None, "signal": "SIGKILL"}
        if not self.started:
            self.sup.send_json(P.SPAWN_FAILED, self.id, {"message": "the command's reaper died before the command started"})
            self.finished = True
            self.cleanup()
            return
        self.maybe_finish()

    # -- stdin (pipes mode) --------------------------------------------------
    def queue_stdin(self, data):
        if self.stdin_fd is None or self.stdin_closing:
            return
        self.stdin_queue.append(data)
        self.flush_stdin()

    def close_stdin_when_flushed(self):
        self.stdin_closing = True
        self.flush_stdin()

    def flush_stdin(self):
        fd = self.stdin_fd
        if fd is None:
            return
        try:
            while self.stdin_queue:
                head = self.stdin_queue[0]
                written = os.write(fd, head)
                if written < len(head):
                    self.stdin_queue[0] = head[written:]
                else:
                    self.stdin_queue.popleft()
        except BlockingIOError:
            pass
        except OSError:  # EPIPE: the command closed its stdin; drop the rest
            self.stdin_queue.clear()
            self.stdin_closing = True
        wants_write = bool(self.stdin_queue)
        if wants_write and not self.stdin_registered:
            self.sup.selector.register(fd, selectors.EVENT_WRITE, (self, "stdin"))
            self.stdin_registered = True
        elif not wants_write and self.stdin_registered:
            self.sup.selector.unregister(fd)
            self.stdin_registered = False
        if not wants_write and self.stdin_closing:
            os.close(fd)
            self.stdin_fd = None

    # -- ending --------------------------------------------------------------
    def request_kill(self, grace_ms):
        if self.sock is None or self.tree_done:
            return
        grace_ms = max(0, grace_ms)
        try:
            fdchannel.send(self.sock, {"t": "kill", "graceMs": grace_ms})
        except OSError:
            pass
        deadline = time.monotonic() + grace_ms / 1000.0 + KILL_WATCHDOG
        self.kill_deadline = min(self.kill_deadline or deadline, deadline)

    def kill_for_quota(self, message):
        """Tells the command's reader why, then kills the whole tree at once."""
        self.quota_killed = True
        self.sup.log("warning", f"call {self.id}: {message}")
        if self.spec["mode"] == "pty":
            self.sup.send(P.STDOUT, self.id, f"\r\n{message}\r\n".encode())
        else:
            self.sup.send(P.STDERR, self.id, f"\n{message}\n".encode())
        self.request_kill(0)

    def maybe_finish(self):
        if not self.finished and self.tree_done and not self.outputs:
            self.finish()

    def finish(self, force=False):
        if self.finished:
            return
        self.finished = True
        if force:
            for fd in list(self.outputs):
                self.read_output(fd, drain=True)
        self.sup.send_json(P.EXIT, self.id, self.exit or {"exitCode": None, "signal": None})
        self.cleanup()

    def cleanup(self):
        selector = self.sup.selector
        for fd in list(self.outputs):
            self.unwatch(fd)
            os.close(fd)
        self.outputs = {}
        if self.stdin_fd is not None:
            if self.stdin_registered:
                selector.unregister(self.stdin_fd)
            os.close(self.stdin_fd)
            self.stdin_fd = None
        if self.sock is not None:
            selector.unregister(self.sock.fileno())
            if self.tree_done and not self.status_buffer:
                self.sup.release_reaper(self.reaper_pid, self.sock)
            else:
                self.sock.close()
            self.sock = None
        self.drain_deadline = None
        self.kill_deadline = None
        self.sup.forget(self)
