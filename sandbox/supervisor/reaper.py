"""Reapers: child subreapers that each own one call's process tree at a time.

The supervisor forks a few reapers ahead of time and reuses them call after
call. A reaper marks itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER),
so every orphan of its call (setsid, nohup, double forks) is re-parented to
it rather than to init: the call's processes are exactly the reaper's
descendants. Where the kernel refuses that (gVisor's, for any process but
its pid 1), orphans go to init (docker-init, which reaps them), and the
reaper finds its call's processes by the call group it starts every command
with (proctree.py). It starts the command (launch.py), reports its pid and exit
status, ends the tree when told to or when the command exits (unless the call
is a background one), says "done" once nothing is left, and waits for the
next call. It carries the commands' extra syscall filter (syscall_filter.py)
itself, so that each command inherits it instead of installing it.

A reaper keeps the supervisor's real and saved uid (0, or GUARD when
commands run as uid 0: identity.py) and its capabilities; the commands
(another real uid, no capabilities) can neither signal nor ptrace it, at
any moment (see launch.py).

Supervisor -> reaper (fdchannel messages on `sock`):
  {"t": "spawn", "spec": {...}} with the command's stdio fds (none for background)
  {"t": "kill", "graceMs": N}
  EOF: the supervisor is gone or retires the reaper: kill at once, exit.
Reaper -> supervisor (JSON lines on `sock`):
  {"t": "started", "pid": N, "group": G|null} | {"t": "failed", "message": S}
     (G: the call group when the reaper is no subreaper, see proctree.py)
  {"t": "exited", "exitCode": N|null, "signal": S|null}
  {"t": "done"}   (nothing of the call is left; the reaper is idle again)
"""

import ctypes
import json
import os
import select
import signal

import fdchannel
import identity
import launch
import proctree
import syscall_filter

PR_SET_CHILD_SUBREAPER = 36
EINVAL = 22
DEFAULT_GRACE_MS = 200


def set_child_subreaper():
    """True when this process is now a child subreaper; False where the kernel
    refuses it with EINVAL (gVisor, for any process but its pid 1)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        return True
    errno = ctypes.get_errno()
    if errno == EINVAL:
        return False
    raise OSError(errno, "prctl(PR_SET_CHILD_SUBREAPER)")


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
    def __init__(self, sock, user, wake_r, subreaper):
        self.sock = sock
        self.receiver = fdchannel.Receiver(sock)
        self.user = user
        self.wake_r = wake_r
        self.me = os.getpid()
        # None: a subreaper keeps every process of its calls among its descendants.
        self.group = None if subreaper else proctree.call_group(self.me)

    def report(self, message):
        try:
            self.sock.sendall((json.dumps(message) + "\n").encode())
        except OSError:
            pass  # the supervisor is gone; EOF on the socket ends us next

    def serve(self):
        """Runs calls until the supervisor closes the socket."""
        while True:
            received = self.receiver.receive()
            if received is None:
                return
            message, fds = received
            if message.get("t") != "spawn":
                for fd in fds:
                    os.close(fd)
                continue
            self.run_call(message["spec"], fds)
            if self.receiver.eof:
                return

    def run_call(self, spec, fds):
        try:
            pid = launch.spawn_command(spec, self.user, tuple(fds) if fds else None, self.group)
        except launch.SpawnError as error:
            # Nothing started, so nothing to wait for: the reaper is idle again.
            self.report({"t": "failed", "message": str(error)})
            return
        finally:
            for fd in fds:  # the command has its own copies
                os.close(fd)
        self.report({"t": "started", "pid": pid, "group": self.group})
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
        self.childless = False

    def reap(self):
        """Collects exited children; `childless` tells whether none is left.

        A reaper that is a child subreaper has a living child for every
        living process of its call (an orphan is re-parented to the reaper
        before its parent can be reaped): no child left means nothing of the
        call is left, without a /proc walk. (One that is not looks for the
        call group as well: run.)
        """
        while True:
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.childless = True
                return
            if pid == 0:
                self.childless = False
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
        me, group = self.reaper.me, self.reaper.group
        sock, wake_r = self.reaper.sock, self.reaper.wake_r
        while True:
            self.reap()
            if self.kill_grace is not None:
                proctree.end_tree(me, self.kill_grace / 1000.0, self.reap, group, self.main_pid)
                break
            if self.main_exited:
                # A subreaper with no child left has nothing left (see reap).
                if self.childless and group is None:
                    break
                if not self.background:
                    # A finished call leaves nothing behind (`cmd &` included). Without a subreaper
                    # orphans went to init: end_tree finds them, its group signal first (no /proc
                    # scan before it: under a fork bomb on gVisor one took seconds and saw none of it).
                    proctree.end_tree(me, DEFAULT_GRACE_MS / 1000.0, self.reap, group, self.main_pid)
                    break
                if proctree.nothing_left(me, group):
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


def run_reaper(sock, user):
    """Entry point in a child the supervisor forks; never returns."""
    code = 0
    try:
        subreaper = set_child_subreaper()
        os.setgroups([])
        # Commands inherit this: the OOM killer takes them before the supervisor.
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        # Commands inherit ignored dispositions and the mask through exec
        # (the supervisor ignores what init could forward): start them clean.
        identity.restore_defaults()
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        signal.set_wakeup_fd(wake_w)
        # Once per reaper rather than once per command: every command is
        # its child and inherits the filter (filters only ever stack).
        syscall_filter.install(root=user[0] == 0)
        Reaper(sock, user, wake_r, subreaper).serve()
    except BaseException as error:  # noqa: BLE001
        try:
            sock.sendall((json.dumps({"t": "failed", "message": f"reaper: {error}"}) + "\n").encode())
        except OSError:
            pass
        code = 1
    finally:
        os._exit(code)
