"""Starting a command as the sandbox user, without forking Python.

Forking the Python reaper costs about a millisecond in a VM; posix_spawn
(vfork + exec in glibc) costs a tenth of that. posix_spawn cannot change
identity by itself, so the reaper briefly takes the command's uid/gid as its
real and effective ids while keeping saved uid/gid 0 (which keeps its
permitted capabilities), spawns with POSIX_SPAWN_RESETIDS, and returns to
root. At execve the kernel sets the child's saved ids to its effective ids,
so the command ends with real = effective = saved = the sandbox ids and an
empty capability set (it is not root, and there are no file capabilities).

The working directory and a background job's log are opened inside that
window too, so access is checked as the command's user and a symlink planted
in place of the log is never followed.

While its real uid is the command's (a fraction of a millisecond), the reaper
could be signalled by another command of the session; the supervisor's kill
watchdog covers a reaper that stops answering (see calls.py).
"""

import os
import signal

SHELL = "/bin/bash"

# Python ignores these; a command must start with the default dispositions
# (e.g. `yes | head` relies on SIGPIPE killing `yes`).
_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD)
_LOG_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND | os.O_CLOEXEC


def _open_log(path):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    return os.open(path, _LOG_FLAGS, 0o600)


class SpawnError(Exception):
    """The command could not start; the message says which step failed."""


def spawn_command(spec, identity, stdio):
    """Starts `bash -c command` in its own session as `identity`; returns its pid.

    `stdio` is (stdin, stdout, stderr) fds, or None for a background call,
    whose output goes to spec["logPath"]. Raises SpawnError.
    """
    uid, gid = identity
    opened = []
    step = "switch identity"
    try:
        os.setresgid(gid, gid, 0)
        os.setresuid(uid, uid, 0)
        step = "chdir " + spec["cwd"]
        os.chdir(spec["cwd"])
        if stdio is None:
            step = "open log " + spec["logPath"]
            log_fd = _open_log(spec["logPath"])
            null_fd = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
            opened = [log_fd, null_fd]
            stdio = (null_fd, log_fd, log_fd)
        step = "exec " + SHELL
        actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(stdio)]
        return os.posix_spawn(
            SHELL,
            ["bash", "-c", spec["command"]],
            spec["env"],
            file_actions=actions,
            setsid=True,
            resetids=True,
            setsigmask=(),
            setsigdef=_DEFAULT_SIGNALS,
        )
    except (OSError, ValueError) as error:
        raise SpawnError(f"{step}: {error}") from None
    finally:
        os.setresuid(0, 0, 0)
        os.setresgid(0, 0, 0)
        os.chdir("/")
        for fd in opened:
            os.close(fd)
