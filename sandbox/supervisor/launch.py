"""Starting a command as the sandbox user, with no moment at which a command
could signal or trace the reaper.

The reaper stays root in its real and saved uid throughout. It takes the
command's uid as its *effective* uid only (signals and ptrace check the real
and saved ids, which stay 0) to enter the working directory and to create a
background job's log, so access is checked as the command's user and a
symlink planted in place of the log is never followed. Back as root, it
forks through subprocess's C child (no Python code between fork and exec),
whose child drops supplementary groups, then gid, then uid, starts a new
session, restores default signal dispositions and execs `bash -c`. At execve
the command has real = effective = saved = the sandbox ids and an empty
capability set (it is not root and there are no file capabilities).

(posix_spawn would be a little faster, but it can only change identity
through POSIX_SPAWN_RESETIDS, which needs the reaper's *real* uid to be the
command's for an instant: the new command, its child, could signal its
reaper in that instant. We measured that race being won.)
"""

import os
import subprocess

SHELL = "/bin/bash"
_LOG_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND | os.O_CLOEXEC


def _open_log(path):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    return os.open(path, _LOG_FLAGS, 0o600)


class SpawnError(Exception):
    """The command could not start; the message says which step failed."""


def spawn_command(spec, identity, stdio):
    """Starts `bash -c command` in its own session as `identity`; returns the
    subprocess.Popen (the caller reaps it and sets `returncode`).

    `stdio` is (stdin, stdout, stderr) fds, or None for a background call,
    whose output goes to spec["logPath"]. Raises SpawnError.
    """
    uid, gid = identity
    opened = []
    step = "switch identity"
    try:
        try:
            os.setresgid(0, gid, 0)
            os.setresuid(0, uid, 0)
            step = "chdir " + spec["cwd"]
            os.chdir(spec["cwd"])
            if stdio is None:
                step = "open log " + spec["logPath"]
                log_fd = _open_log(spec["logPath"])
                opened.append(log_fd)
                null_fd = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
                opened.append(null_fd)
                stdio = (null_fd, log_fd, log_fd)
        finally:
            os.setresuid(0, 0, 0)
            os.setresgid(0, 0, 0)
        step = "exec " + SHELL
        return subprocess.Popen(
            ["bash", "-c", spec["command"]],
            executable=SHELL,
            stdin=stdio[0],
            stdout=stdio[1],
            stderr=stdio[2],
            env=spec["env"],
            close_fds=True,
            restore_signals=True,
            start_new_session=True,
            user=uid,
            group=gid,
            extra_groups=[],
        )
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        raise SpawnError(f"{step}: {error}") from None
    finally:
        os.chdir("/")
        for fd in opened:
            os.close(fd)
