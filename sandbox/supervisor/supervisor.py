"""toolcell's in-container supervisor: one per sandbox session.

Started as the container's main process (under docker-init), as container
root with only CAP_SETUID, CAP_SETGID, CAP_SETPCAP and CAP_KILL, and
no-new-privileges; when commands run as uid 0 it moves its real and saved
uid out of their reach first (identity.py).
It speaks the framed protocol of protocol.py over the container's attached
stdin/stdout. Each SPAWN goes to an idle reaper (reaper.py; a few are forked
at start-up and reused), which starts the command as the workspace owner's
uid and gid (or a hosting tenant's), without capabilities, in its own session, with a PTY (pty mode), pipes (pipes mode) or
a log file (background), and owns its process tree.

It never trusts command output: output is forwarded as length-prefixed bytes.
The host is the only writer of its stdin. Stdin EOF (the host went away) or
SHUTDOWN kills every call and exits, which stops the container.
"""

import argparse
import collections
import errno
import json
import os
import resource
import selectors
import signal
import sys
import time

import fdchannel
import identity
import mount_check
import proctree
import protocol as P
import reaper
from calls import BACKGROUND_QUOTA_WINDOW, Call
from output_budget import OutputBudget
from quota import WorkspaceQuota
from stdio import open_stdio

SHUTDOWN_TIMEOUT = 5.0
IDLE_REAPERS = 2       # started ahead, so the first calls do not wait for a fork
MAX_IDLE_REAPERS = 4   # more idle ones than this are retired
# Under gVisor the pids limit is RLIMIT_NPROC in its kernel (hardening.ts),
# counted per real uid: the commands' tasks apart from the supervisor's and
# the reapers' (never the commands' uid: identity.py). The reapers (one a call) are
# held here to a quarter of it (64 calls at once for the default 256): a
# call costs about 4.5 MB there against 1.6 MB under runc (measured), and a
# gVisor sandbox at its memory limit can lose its Sentry, every process with it.
_NPROC = resource.getrlimit(resource.RLIMIT_NPROC)[0]
MAX_REAPERS = max(4, _NPROC // 4) if _NPROC != resource.RLIM_INFINITY else float("inf")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="supervisor")
    parser.add_argument("--uid", type=int, required=True)
    parser.add_argument("--gid", type=int, required=True)
    parser.add_argument("--workspace", default="/workspace")
    parser.add_argument("--log-dir", default="/workspace/.toolcell/background")
    parser.add_argument("--workspace-bytes", type=int, default=0, help="per-call growth limit of the workspace filesystem (0: none)")
    parser.add_argument("--workspace-files", type=int, default=0, help="per-call limit of new inodes there (0: none)")
    parser.add_argument("--expect-workspace", type=mount_check.parse_identity, help="DEV:INO the workspace mount must be")
    parser.add_argument("--expect-log-dir", type=mount_check.parse_identity, help="DEV:INO the log folder mount must be")
    args = parser.parse_args(argv)
    if args.uid < 0 or args.gid < 0:
        parser.error("--uid and --gid must be ids")
    return args


class Supervisor:
    def __init__(self, args):
        self.args = args
        self.identity = (args.uid, args.gid)
        self.selector = selectors.DefaultSelector()
        self.writer = P.FrameWriter(1)
        self.reader = P.FrameReader()
        self.calls = {}
        self.idle = collections.OrderedDict()  # reaper pid -> socket
        self.host_gone = False
        self.shutdown_at = None
        self.quota = WorkspaceQuota(args.workspace, [args.log_dir], self.identity, args.workspace_bytes, args.workspace_files)
        self.quota_due = 0.0  # when the workspace is to be sampled next (quota.py, step 1)

    # -- sending -------------------------------------------------------------
    def send(self, kind, call_id, payload=b""):
        if self.host_gone:
            return
        try:
            self.writer.send(kind, call_id, payload)
        except (BrokenPipeError, ConnectionResetError):
            self.host_gone = True

    def send_json(self, kind, call_id, value):
        self.send(kind, call_id, json.dumps(value).encode())

    def log(self, level, message):
        self.send_json(P.LOG, 0, {"level": level, "message": message})

    # -- host frames ---------------------------------------------------------
    def on_host_readable(self):
        try:
            data = os.read(0, 1 << 20)
        except BlockingIOError:
            return
        if not data:
            self.selector.unregister(0)
            self.begin_shutdown(grace_ms=0)
            return
        self.reader.feed(data)
        for kind, call_id, payload in self.reader.frames():
            self.on_frame(kind, call_id, payload)

    def on_frame(self, kind, call_id, payload):
        if kind == P.SPAWN:
            self.spawn(call_id, payload)
            return
        if kind == P.SHUTDOWN:
            self.begin_shutdown(grace_ms=0)
            return
        call = self.calls.get(call_id)
        if call is None:
            return  # a late frame for a finished call
        if kind == P.STDIN:
            call.queue_stdin(payload)
        elif kind == P.STDIN_EOF:
            call.close_stdin_when_flushed()
        elif kind == P.KILL:
            grace = json.loads(payload or b"{}").get("graceMs", reaper.DEFAULT_GRACE_MS)
            call.request_kill(int(grace))

    def spawn(self, call_id, payload):
        if call_id in self.calls or self.shutdown_at is not None:
            self.send_json(P.SPAWN_FAILED, call_id, {"message": "duplicate call id or shutting down"})
            return
        try:
            spec = json.loads(payload)
            budget = OutputBudget(spec)
            stdio, outputs, stdin_fd = open_stdio(spec, self.args, call_id)
        except (ValueError, KeyError, TypeError, OSError) as error:
            self.send_json(P.SPAWN_FAILED, call_id, {"message": f"bad spawn request: {error}"})
            return
        call = Call(call_id, spec, self, stdio, outputs, stdin_fd, budget)
        self.calls[call_id] = call
        try:
            pid, sock = self.take_reaper()
        except OSError as error:  # EAGAIN: the pids limit is reached
            call.abandon(f"cannot start a process: {error}")
            return
        try:
            call.start(pid, sock)
        except OSError as error:
            sock.close()
            call.abandon(f"cannot hand the command to its reaper: {error}")

    def forget(self, call):
        self.calls.pop(call.id, None)

    # -- reapers -------------------------------------------------------------
    def fork_reaper(self):
        if len(self.managed_pids()) >= MAX_REAPERS:
            raise OSError(errno.EAGAIN, "the pids limit is reached")
        mine, theirs = fdchannel.pair()
        pid = os.fork()
        if pid == 0:
            try:
                mine.close()
                null = os.open("/dev/null", os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                signal.set_wakeup_fd(-1)
                reaper.close_all_except({0, 1, 2, theirs.fileno()})
                reaper.run_reaper(theirs, self.identity)
            finally:
                os._exit(1)
        theirs.close()
        return pid, mine

    def take_reaper(self):
        if self.idle:
            pid, sock = self.idle.popitem(last=False)
            self.selector.unregister(sock.fileno())
            return pid, sock
        return self.fork_reaper()

    def release_reaper(self, pid, sock):
        """Takes back a reaper whose call is over, or retires it."""
        if self.shutdown_at is not None or len(self.idle) >= MAX_IDLE_REAPERS:
            sock.close()
            return
        self.idle[pid] = sock
        self.selector.register(sock.fileno(), selectors.EVENT_READ, ("idle", pid))

    def on_idle_readable(self, pid):
        """An idle reaper only speaks by dying (EOF)."""
        sock = self.idle.pop(pid, None)
        if sock is not None:
            self.selector.unregister(sock.fileno())
            sock.close()

    def managed_pids(self):
        """Reapers (idle or busy): anything else the supervisor adopts is a stray."""
        pids = set(self.idle)
        pids.update(call.reaper_pid for call in self.calls.values() if call.reaper_pid is not None)
        return pids

    # -- lifecycle -----------------------------------------------------------
    def begin_shutdown(self, grace_ms):
        if self.shutdown_at is None:
            self.shutdown_at = time.monotonic()
        for pid in list(self.idle):
            self.on_idle_readable(pid)
        for call in list(self.calls.values()):
            call.request_kill(grace_ms)

    def reap_children(self):
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def quota_watched(self):
        return [c for c in self.calls.values() if c.quota_base is not None and not c.tree_done and not c.quota_killed]

    def check_quota(self, now):
        watched = self.quota_watched()
        if not watched or now < self.quota_due:
            return
        sample = self.quota.sample()
        for call in watched:
            if call.quota_window_end is not None and now >= call.quota_window_end:
                call.quota_base = call.quota_last = sample
                call.quota_window_end = now + BACKGROUND_QUOTA_WINDOW
                continue
            call.quota_base = self.quota.follow_rise(call.quota_base, call.quota_last, sample)
            call.quota_last = sample or call.quota_last
            if not self.quota.grew_past(call.quota_base, sample):
                continue
            frozen = proctree.freeze(call.reaper_pid, call.group)
            message, call.quota_base, _attributed = self.quota.confirm(call.quota_base, sample)
            if message:
                call.kill_for_quota(message)  # the reaper kills the frozen tree
            else:
                proctree.thaw(frozen)
        self.quota_due = now + min(self.quota.interval(call.quota_base, sample) for call in watched)

    def quota_started(self, call):
        """A call's baseline was just taken: sample again before it could use up its headroom."""
        self.quota_due = min(self.quota_due, time.monotonic() + self.quota.interval(call.quota_base, call.quota_base))

    def next_timeout(self):
        deadlines = [d for c in self.calls.values() for d in (c.drain_deadline, c.kill_deadline, c.next_deadline()) if d is not None]
        watched = self.quota_watched()
        if watched:
            deadlines.append(self.quota_due)
        if self.shutdown_at is not None:
            deadlines.append(self.shutdown_at + SHUTDOWN_TIMEOUT)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())

    def refusal(self):
        """Why the mounts are not the folders the host checked, or None."""
        expected = {}
        if self.args.expect_workspace is not None:
            expected[self.args.workspace] = self.args.expect_workspace
        if self.args.expect_log_dir is not None:
            expected[self.args.log_dir] = self.args.expect_log_dir
        problems = mount_check.mismatches(expected, self.identity)
        if not problems:
            return None
        return (
            "the folder mounted in the sandbox is not the one toolcell checked (it was replaced while the "
            "container started, e.g. by a rename in a folder a sandbox can write): " + "; ".join(problems)
        )

    def run(self):
        refused = self.refusal()
        if refused is not None:
            # Before any reaper or command: nothing touches what was mounted by mistake.
            self.send_json(P.REFUSED, 0, {"type": "workspace_mismatch", "message": refused})
            return 3
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        os.set_blocking(wake_r, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in identity.ignore_relayed(self.identity):
            signal.signal(sig, lambda *_: self.begin_shutdown(grace_ms=0))
        signal.set_wakeup_fd(wake_w)
        os.set_blocking(0, False)
        self.selector.register(0, selectors.EVENT_READ, "host")
        self.selector.register(wake_r, selectors.EVENT_READ, "wake")
        for _ in range(IDLE_REAPERS):
            self.release_reaper(*self.fork_reaper())
        self.ready()
        while True:
            for key, mask in self.selector.select(self.next_timeout()):
                if key.data == "host":
                    self.on_host_readable()
                elif key.data == "wake":
                    try:
                        os.read(wake_r, 4096)
                    except BlockingIOError:
                        pass
                    self.reap_children()
                elif key.data[0] == "idle":
                    self.on_idle_readable(key.data[1])
                else:
                    call, role = key.data
                    call.on_event(key.fd, role, mask)
            now = time.monotonic()
            for call in list(self.calls.values()):
                call.on_tick(now)
            if self.quota.enabled:
                self.check_quota(now)
            if self.shutdown_at is not None and (not self.calls or now >= self.shutdown_at + SHUTDOWN_TIMEOUT):
                return 0

    def ready(self):
        self.send_json(
            P.READY,
            0,
            {
                "version": P.PROTOCOL_VERSION,
                "pid": os.getpid(),
                "uid": self.args.uid,
                "gid": self.args.gid,
                "workspace": self.args.workspace,
            },
        )


def main(argv):
    args = parse_args(argv)
    identity.separate_from((args.uid, args.gid))
    # Orphans of a crashed reaper come back here rather than to init. gVisor
    # refuses this to all but its pid 1 (docker-init): there init adopts them,
    # and the dead reaper's call group finds them (calls.py, proctree.py).
    reaper.set_child_subreaper()
    return Supervisor(args).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
