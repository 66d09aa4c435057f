"""Reapers: child subreapers that each own one call's process tree at a time.

The supervisor forks a few reapers ahead of time and reuses them call after
call. A reaper marks itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER),
so every orphan of its call (setsid, nohup, double forks) is re-parented to
it rather than to init: the call's processes are exactly the reaper's
descendants. It starts the command (launch.py), reports its pid and exit
status, ends the tree when told to or when the command exits (unless the call
is a background one), says "done" once nothing is left, forks the stub of
its next command, and waits for the next call.

A reaper stays root (real and saved uid 0) with CAP_KILL; the commands
(another uid, no capabilities) can neither signal nor ptrace it, at any
moment (see launch.py).

Supervisor -> reaper (fdchannel messages on `sock`):
  {"t": "spawn", "spec": {...}} with the command's stdio fds (none for background)
  {"t": "kill", "graceMs": N}
  EOF: the supervisor is gone or retires the reaper: kill at once, exit.
Reaper -> supervisor (JSON lines on `sock`):
  {"t": "started", "pid": N} | {"t": "failed", "message": S}
  {"t": "exited", "exitCode": N|null, "signal": S|null}
  {"t": "done"}   (nothing of the call is left; the reaper is idle again)
"""

import ctypes
import json
import os
import select
import signal

import fdchannel
import launch
import proctree

PR_SET_CHILD_SUBREAPER = 36
DEFAULT_GRACE_MS = 200


def set_child_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def close_all_except(keep):
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _status(code):
    if os.WIFSIGNALED(code):
        return {"exitCode": None, "signal": signal.Signals(os.WTERMSIG(code)).name}
    return {"exitCode": os.WEXITSTATUS(code), "signal": None}


class Reaper:
    def __init__(self, sock, identity, wake_r):
        self.sock = sock
        self.receiver = fdchannel.Receiver(sock)
        self.identity = identity
        self.wake_r = wake_r
        self.me = os.getpid()

    def report(self, message):
        try:
            self.sock.sendall((json.dumps(message) + "\n").encode())
        except OSError:
            pass  # the supervisor is gone; EOF on the socket ends us next

    def prepare_stub(self):
        """Forks the next command's process ahead of time (see launch.py)."""
        stub_sock, mine = fdchannel.pair()
        error_r, error_w = os.pipe()  # close-on-exec: EOF at a successful exec
        pid = os.fork()
        if pid == 0:
            try:
                mine.close()
                os.close(error_r)
                launch.prepare_stub()
                received = fdchannel.Receiver(stub_sock).receive()
                if received is None:
                    os._exit(0)  # the reaper retired
                message, fds = received
                stub_sock.close()
                launch.exec_command(message["spec"], self.identity, tuple(fds) if fds else None, error_w)
            finally:
                os._exit(127)
        stub_sock.close()
        os.close(error_w)
        return pid, mine, error_r

    def serve(self):
        """Runs calls until the supervisor closes the socket."""
        while True:
            stub = self.prepare_stub()
            received = self.receiver.receive()
            if received is None:
                self.retire(stub)
                return
            message, fds = received
            if message.get("t") != "spawn":
                for fd in fds:
                    os.close(fd)
                self.retire(stub)
                continue
            self.run_call(stub, message["spec"], fds)
            if self.receiver.eof:
                return

    def retire(self, stub):
        pid, sock, error_r = stub
        sock.close()  # the stub sees EOF and exits
        os.close(error_r)
        os.waitpid(pid, 0)

    def run_call(self, stub, spec, fds):
        pid, sock, error_r = stub
        try:
            fdchannel.send(sock, {"spec": spec}, fds)
        finally:
            sock.close()
            for fd in fds:  # the command has its own copies
                os.close(fd)
        message = b""
        while True:
            chunk = os.read(error_r, 4096)
            if not chunk:
                break
            message += chunk
        os.close(error_r)
        if message:
            os.waitpid(pid, 0)
            # Nothing started, so nothing to wait for: the reaper is idle again.
            self.report({"t": "failed", "message": message.decode("utf-8", "replace")})
            return
        self.report({"t": "started", "pid": pid})
        _CallTree(self, pid, bool(spec.get("background"))).run()
        self.report({"t": "done"})


class _CallTree:
    """The wait/kill loop of one call."""

    def __init__(self, reaper, main_pid, background):
        self.reaper = reaper
        self.main_pid = main_pid
        self.background = background
        self.main_exited = False
        self.kill_grace = None

    def reap(self):
        while True:
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.main_pid and not self.main_exited:
                self.main_exited = True
                self.reaper.report({"t": "exited", **_status(code)})

    def read_messages(self):
        receiver = self.reaper.receiver
        receiver.fill()
        for message, fds in receiver.messages():
            for fd in fds:
                os.close(fd)
            if message.get("t") == "kill":
                grace = max(0, int(message.get("graceMs", DEFAULT_GRACE_MS)))
                self.kill_grace = grace if self.kill_grace is None else min(self.kill_grace, grace)
        if receiver.eof:
            self.kill_grace = 0

    def run(self):
        me = self.reaper.me
        sock, wake_r = self.reaper.sock, self.reaper.wake_r
        while True:
            self.reap()
            if self.kill_grace is not None:
                proctree.end_tree(me, self.kill_grace / 1000.0, self.reap)
                break
            if self.main_exited:
                if not self.background:
                    # A finished call leaves nothing behind (`cmd &` included).
                    proctree.end_tree(me, DEFAULT_GRACE_MS / 1000.0, self.reap)
                    break
                if not proctree.descendants(me):
                    break
            # A background tree's last process may not be our child: poll too.
            timeout = 1.0 if self.main_exited else None
            readable, _, _ = select.select([sock, wake_r], [], [], timeout)
            if wake_r in readable:
                try:
                    os.read(wake_r, 4096)
                except BlockingIOError:
                    pass
            if sock in readable:
                self.read_messages()
        self.reap()
        if not self.main_exited:
            self.reaper.report({"t": "exited", "exitCode": None, "signal": "SIGKILL"})


def run_reaper(sock, identity):
    """Entry point in a child the supervisor forks; never returns."""
    code = 0
    try:
        set_child_subreaper()
        os.setgroups([])
        # Commands inherit this: the OOM killer takes them before the supervisor.
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.set_wakeup_fd(wake_w)
        Reaper(sock, identity, wake_r).serve()
    except BaseException as error:  # noqa: BLE001
        try:
            sock.sendall((json.dumps({"t": "failed", "message": f"reaper: {error}"}) + "\n").encode())
        except OSError:
            pass
        code = 1
    finally:
        os._exit(code)
