"""Starting a command as the sandbox user, fast, with no moment at which a
command could signal or trace its reaper.

Each idle reaper keeps one *stub*: a child it forked ahead of time (forking
the Python reaper costs about a millisecond in a VM, so it happens between
calls, not on a call's path). The stub waits, as root, for a request and the
command's stdio. Then, in the stub only: new session, default signal
dispositions, supplementary groups dropped, gid then uid set for real,
effective and saved ids, the working directory entered and a background
job's log created as the user (so access is checked as the user and a
symlink planted in place of the log is never followed), stdio in place,
the extra syscall filter (syscall_filter.py), execve `bash -c`. The command ends with real = effective = saved = the
sandbox ids and an empty capability set. The reaper itself never changes
identity, so commands can never signal or trace it.

Anything that fails before execve is written to `error_fd` (close-on-exec,
so a successful exec closes it with nothing written) and the stub exits 127.
"""

import os
import signal

import syscall_filter

SHELL = "/bin/bash"

# Python ignores or handles these; a command must start with the default
# dispositions (e.g. `yes | head` relies on SIGPIPE killing `yes`).
_RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD)
_LOG_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND


def _open_log(path):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    return os.open(path, _LOG_FLAGS, 0o600)


def prepare_stub():
    """What a waiting stub can do before it knows its command: a session of
    its own and default signal dispositions (it stays root until exec_command)."""
    signal.set_wakeup_fd(-1)
    for sig in _RESET_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.setsid()


def exec_command(spec, identity, stdio, error_fd):
    """Never returns. `stdio` is (stdin, stdout, stderr) fds, or None for a
    background call, whose output goes to spec["logPath"]. Runs in a stub
    after prepare_stub()."""
    step = "drop identity"
    try:
        uid, gid = identity
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        step = "chdir " + spec["cwd"]
        os.chdir(spec["cwd"])
        if stdio is None:
            step = "open log " + spec["logPath"]
            log_fd = _open_log(spec["logPath"])
            stdio = (os.open("/dev/null", os.O_RDONLY), log_fd, log_fd)
        step = "redirect stdio"
        for target, fd in enumerate(stdio):
            if fd != target:
                os.dup2(fd, target)
        for fd in set(stdio):
            if fd > 2:
                os.close(fd)
        step = "install the syscall filter"
        syscall_filter.install()
        step = "exec " + SHELL
        os.execve(SHELL, ["bash", "-c", spec["command"]], spec["env"])
    except BaseException as error:  # noqa: BLE001 - report anything, then die
        try:
            os.write(error_fd, f"{step}: {error}".encode("utf-8", "replace"))
        finally:
            os._exit(127)
