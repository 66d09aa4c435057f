"""Starting a command as its user, fast, with no moment at which a command
could signal or trace its reaper, nor take over a process that holds
privileges.

The reaper's real and saved uid are never the command's (identity.py: 0,
or GUARD when commands run as uid 0). It takes the command's uid as its
*effective* uid only (signals and ptrace check the real and saved ids) to
enter the working directory and to create a background job's log, so
access is checked as the command's user and a symlink planted in place of
the log is never followed. Back to effective uid 0, it starts `setpriv`
with posix_spawn in a new session, with default signal dispositions, an
empty signal mask and the command's stdio; setpriv sets the real,
effective and saved uid and gid to the command's, drops every
supplementary group (or, where reapers are no subreapers, leaves the call
group as the only one: proctree.py; without CAP_SETGID a command, uid 0
included, can neither drop nor change it), empties the inheritable and bounding capability sets
(CAP_SETPCAP) and execs `bash -c`. At that execve the capability sets
become empty: a non-root uid gets none without file capabilities, and a
uid-0 command, for which the kernel would grant root the bounding set,
finds it empty (and no-new-privileges would refuse the gain anyway).
While setpriv runs it still holds the supervisor's capabilities in its
permitted set and is not dumpable, so a command of the session can neither
ptrace it nor read or write its memory (both need a superset of the
target's capabilities); signalling it can only stop or end the call it
belongs to, as a command can do to any other command of its session. The
extra syscall filter (syscall_filter.py) is already in place: the reaper
installed it on itself once, and filters are inherited across fork and exec.

Why posix_spawn and setpriv (measured in a VM where a fork costs
milliseconds): posix_spawn creates the child with CLONE_VM|CLONE_VFORK, so the
reaper's page tables are never copied (~0.4 ms of the reaper's CPU per call,
against ~5-7 ms for subprocess's fork, and ~33 ms of copy-on-write faults for
a stub forked ahead of time that ran Python before its exec). A vfork child
must only exec, so the identity change moves to setpriv, at the price of one
more exec of a small C program.

One visible trace of glibc's posix_spawn: its child sets glibc's two
internal signals (32 and 33, which programs cannot use through glibc) to
SIG_IGN before exec, so commands start with those two ignored.

(POSIX_SPAWN_RESETIDS is no substitute: it needs the reaper's *real* uid to
be the command's for an instant, in which the new command's child could
signal its reaper.)
"""

import errno
import os
import signal
import time

import identity

SHELL = "/bin/bash"
SETPRIV = "/usr/bin/setpriv"
# Python ignores or handles these; a command must start with the default
# dispositions (e.g. `yes | head` relies on SIGPIPE killing `yes`).
_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD)
# Empty before the exec, so that not even a uid-0 command starts with a capability.
_NO_CAPABILITIES = ("--inh-caps=-all", "--bounding-set=-all")
# Right after a storm of processes is killed, the pids limit still counts its exiting processes
# for a moment: the next command's spawn failed with EAGAIN although none of the storm was left
# (seen under load in kill-process-tree.test.ts). Tried again for about 0.8 s before failing.
_EAGAIN_PAUSES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4)
_LOG_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND | os.O_CLOEXEC


def _open_log(path):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    return os.open(path, _LOG_FLAGS, 0o600)


class SpawnError(Exception):
    """The command could not start; the message says which step failed."""


def spawn_command(spec, user, stdio, call_group=None):
    """Starts `bash -c command` in its own session as `user` (uid, gid); returns its
    pid (the caller reaps it).

    `stdio` is (stdin, stdout, stderr) fds, or None for a background call,
    whose output goes to spec["logPath"]. Every other fd of the reaper is
    close-on-exec. `call_group`, when given, is the command's one
    supplementary group, the marker of its call (proctree.py); otherwise it
    has none. Raises SpawnError.
    """
    uid, gid = user
    opened = []
    step = "switch identity"
    try:
        with identity.acting_as(user):
            step = "chdir " + spec["cwd"]
            os.chdir(spec["cwd"])
            if stdio is None:
                step = "open log " + spec["logPath"]
                log_fd = _open_log(spec["logPath"])
                opened.append(log_fd)
                null_fd = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
                opened.append(null_fd)
                stdio = (null_fd, log_fd, log_fd)
        step = "exec " + SETPRIV
        groups = "--clear-groups" if call_group is None else f"--groups={call_group}"
        argv = [SETPRIV, f"--reuid={uid}", f"--regid={gid}", groups, *_NO_CAPABILITIES, "--", SHELL, "-c", spec["command"]]
        stdio_actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(stdio)]
        for pause in (*_EAGAIN_PAUSES, None):
            try:
                return os.posix_spawn(
                    SETPRIV,
                    argv,
                    spec["env"],
                    file_actions=stdio_actions,
                    setsid=True,
                    setsigmask=(),
                    setsigdef=_DEFAULT_SIGNALS,
                )
            except OSError as error:
                if error.errno != errno.EAGAIN or pause is None:
                    raise
                time.sleep(pause)
    except (OSError, ValueError) as error:
        raise SpawnError(f"{step}: {error}") from None
    finally:
        os.chdir("/")
        for fd in opened:
            os.close(fd)
