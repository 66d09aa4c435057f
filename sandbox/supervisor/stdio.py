"""A call's request, checked, and the stdio its command gets.

pty mode: stdout and stderr are one PTY (window size from the request); stdin
is /dev/null and there is no controlling terminal, so `read` gets EOF and
/dev/tty readers (sudo, ssh, getpass) fail at once instead of hanging.
Where the kernel's terminals cannot carry output safely (gVisor, see
_pty_usable), one pipe stands in for the PTY.
pipes mode: separate stdout/stderr pipes; stdin is a pipe fed by STDIN frames
when the request says so, else /dev/null.
background: nothing to read; output goes to a log file the command's user
creates (launch.py).
"""

import fcntl
import os
import struct
import termios
import time

import protocol as P


_PTY_PROBE_BYTES = 4 << 20


def _pty_usable():
    """Whether this kernel's terminals can carry a command's output: writes to
    the slave must block once the master holds a bufferful (else a `yes`
    flood queues in the kernel's memory until the session's memory limit
    kills the container), and reading the master once the slave is closed
    everywhere must fail (EIO: how the end of the output is known). Linux's
    do; gVisor's (Debian's runsc, 2022) do neither, so there pty-mode calls
    get one pipe for stdout and stderr instead (no terminal: isatty is false)."""
    master, slave = os.openpty()
    try:
        os.set_blocking(slave, False)
        written = 0
        try:
            while written < _PTY_PROBE_BYTES:
                written += os.write(slave, b"\n" * 65536)
        except BlockingIOError:
            pass
        if written >= _PTY_PROBE_BYTES:
            return False
        os.close(slave)
        slave = None
        os.set_blocking(master, False)
        try:
            while os.read(master, 65536):
                pass
        except BlockingIOError:
            return False
        except OSError:
            return True
        return True
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)


PTY_USABLE = _pty_usable()


def _require(condition, message):
    if not condition:
        raise ValueError(message)


def _validate(spec, workspace):
    _require(isinstance(spec, dict), "spec must be an object")
    _require(isinstance(spec.get("command"), str), "command must be a string")
    env = spec.get("env")
    _require(isinstance(env, dict), "env must be an object")
    for key, value in env.items():
        _require(isinstance(key, str) and isinstance(value, str), "env values must be strings")
        _require("=" not in key and "\0" not in key and "\0" not in value, f"bad env entry {key!r}")
    _require(spec.get("mode") in ("pty", "pipes"), "mode must be pty or pipes")
    relative = spec.get("cwd") or "."
    _require(isinstance(relative, str) and not relative.startswith("/"), "cwd must be relative")
    cwd = os.path.normpath(os.path.join(workspace, relative))
    _require(cwd == workspace or cwd.startswith(workspace + "/"), "cwd leaves the workspace")
    spec["cwd"] = cwd


def _window(spec, field, default):
    """A window dimension: TIOCSWINSZ holds it in 16 bits, and a value past
    them would raise struct.error, which is no ValueError and would end the
    whole session instead of this call."""
    value = spec.get(field)
    if value is None:
        return default
    _require(type(value) is int and 1 <= value <= 65535, f"{field} must be an integer from 1 to 65535")
    return value


def open_stdio(spec, args, call_id):
    """Returns (stdio for the command, {fd: frame kind} to read, stdin fd to write)."""
    _validate(spec, args.workspace)
    if spec.get("background"):
        name = spec.get("logName") or f"{int(time.time() * 1000)}-{call_id}.log"
        _require(isinstance(name, str) and "/" not in name and name not in (".", "..") and len(name) <= 200,
                 "logName must be a plain file name")
        spec["logPath"] = f"{args.log_dir}/{name}"
        return None, {}, None
    if spec["mode"] == "pty" and not PTY_USABLE:
        _window(spec, "cols", 80)
        _window(spec, "rows", 24)
        out_r, out_w = os.pipe()
        os.set_blocking(out_r, False)
        null = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
        return (null, out_w, out_w), {out_r: P.STDOUT}, None
    if spec["mode"] == "pty":
        cols = _window(spec, "cols", 80)
        rows = _window(spec, "rows", 24)
        master, slave = os.openpty()
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        # As on the host (src/backends/host/shell-command.ts): no output
        # post-processing, whose LF->CRLF mapping costs ~30x throughput on
        # short lines (the renderer treats LF as CRLF anyway), and no echo.
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.OPOST
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        os.set_blocking(master, False)
        # The command's user may reopen its terminal by path (stty -F, /proc/self/fd/1);
        # only this container's processes can see its devpts instance.
        os.fchmod(slave, 0o666)
        null = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
        # No controlling terminal: /dev/tty readers (sudo, ssh) fail at once
        # instead of waiting for input that never comes; stdin is at EOF.
        return (null, slave, slave), {master: P.STDOUT}, None
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    os.set_blocking(out_r, False)
    os.set_blocking(err_r, False)
    stdin_fd = None
    if spec.get("stdin"):
        in_r, stdin_fd = os.pipe()
        os.set_blocking(stdin_fd, False)
    else:
        in_r = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
    return (in_r, out_w, err_w), {out_r: P.STDOUT, err_r: P.STDERR}, stdin_fd
