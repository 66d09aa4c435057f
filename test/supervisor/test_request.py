"""SPAWN request validation (stdio.py): every malformed request is refused
with ValueError, which the supervisor turns into SPAWN_FAILED; nothing else
may escape, since an uncaught exception would end the whole session."""

import os
import types

import pytest

from stdio import open_stdio

ARGS = types.SimpleNamespace(workspace="/workspace", log_dir="/run/toolcell/logs")


def request(**overrides):
    spec = {"command": "true", "cwd": ".", "env": {"PATH": "/usr/bin"}, "mode": "pipes", "background": True}
    spec.update(overrides)
    return spec


def close_all(result):
    stdio, outputs, stdin_fd = result
    fds = set(stdio or ()) | set(outputs) | ({stdin_fd} if stdin_fd is not None else set())
    for fd in fds:
        os.close(fd)


@pytest.mark.parametrize(
    "spec, message",
    [
        ([], "spec must be an object"),
        (request(command=["ls"]), "command must be a string"),
        (request(env=None), "env must be an object"),
        (request(env={"A": 1}), "env values must be strings"),
        (request(env={"A=B": "x"}), "bad env entry"),
        (request(env={"A": "x\0y"}), "bad env entry"),
        (request(mode="raw"), "mode must be pty or pipes"),
        (request(cwd="/etc"), "cwd must be relative"),
        (request(cwd="../etc"), "cwd leaves the workspace"),
        (request(cwd="a/../../etc"), "cwd leaves the workspace"),
        (request(cwd=7), "cwd must be relative"),
        (request(logName="../escape.log"), "logName must be a plain file name"),
        (request(logName=".."), "logName must be a plain file name"),
        (request(logName="x" * 201), "logName must be a plain file name"),
        (request(logName=5), "logName must be a plain file name"),
        (request(background=False, mode="pty", cols=70000), "cols must be an integer from 1 to 65535"),
        (request(background=False, mode="pty", rows=0), "rows must be an integer from 1 to 65535"),
        (request(background=False, mode="pty", cols="wide"), "cols must be an integer from 1 to 65535"),
        (request(background=False, mode="pty", rows=True), "rows must be an integer from 1 to 65535"),
    ],
)
def test_a_malformed_request_is_refused_with_a_reason(spec, message):
    with pytest.raises(ValueError, match=message):
        open_stdio(spec, ARGS, 1)


def test_cwd_is_resolved_inside_the_workspace():
    spec = request(cwd="src/./lib/../app")
    open_stdio(spec, ARGS, 1)
    assert spec["cwd"] == "/workspace/src/app"


def test_a_background_call_logs_to_the_log_folder():
    spec = request(logName="job-1.log")
    assert open_stdio(spec, ARGS, 4) == (None, {}, None)
    assert spec["logPath"] == "/run/toolcell/logs/job-1.log"


def test_a_pty_call_gets_one_terminal_for_both_streams():
    stdio, outputs, stdin_fd = result = open_stdio(request(background=False, mode="pty", cols=100, rows=40), ARGS, 2)
    try:
        assert stdio[1] == stdio[2] and os.isatty(stdio[1])
        assert stdin_fd is None and len(outputs) == 1
    finally:
        close_all(result)


def test_a_pipes_call_with_stdin_gets_a_writable_stdin():
    result = open_stdio(request(background=False, stdin=True), ARGS, 3)
    try:
        stdio, outputs, stdin_fd = result
        assert len(outputs) == 2 and stdin_fd is not None
        os.write(stdin_fd, b"x")
        assert os.read(stdio[0], 1) == b"x"
    finally:
        close_all(result)
