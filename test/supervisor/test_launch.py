"""launch: a command's spawn tries again for a moment when the pids limit is full.

Right after a storm of processes is killed, the pids cgroup still counts its
exiting processes: a spawn then fails with EAGAIN although the storm is gone.
posix_spawn is replaced here (the limit cannot be filled on purpose outside a
container); the spawn's arguments and everything else are the real ones.
"""

import errno
import os

import pytest

import launch

ROOT = (os.getuid(), os.getgid())
SPEC = {"command": "true", "cwd": "/", "env": {"PATH": "/usr/bin:/bin"}}


def stdio():
    null = os.open("/dev/null", os.O_RDWR)
    return (null, null, null)


def failing(times, code, calls):
    real = os.posix_spawn

    def spawn(*args, **kwargs):
        calls.append(args[0])
        if len(calls) <= times:
            raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)

    return spawn


def test_a_full_pids_limit_that_frees_up_is_waited_for(monkeypatch):
    calls = []
    monkeypatch.setattr(launch.os, "posix_spawn", failing(3, errno.EAGAIN, calls))
    pid = launch.spawn_command(SPEC, ROOT, stdio())
    assert os.waitpid(pid, 0)[1] == 0
    assert len(calls) == 4


def test_a_pids_limit_that_stays_full_fails_with_the_reason(monkeypatch):
    calls = []
    monkeypatch.setattr(launch.os, "posix_spawn", failing(100, errno.EAGAIN, calls))
    monkeypatch.setattr(launch.time, "sleep", lambda _seconds: None)
    with pytest.raises(launch.SpawnError, match="Resource temporarily unavailable"):
        launch.spawn_command(SPEC, ROOT, stdio())
    assert len(calls) == len(launch._EAGAIN_PAUSES) + 1


def test_other_errors_are_not_tried_again(monkeypatch):
    calls = []
    monkeypatch.setattr(launch.os, "posix_spawn", failing(100, errno.ENOENT, calls))
    with pytest.raises(launch.SpawnError):
        launch.spawn_command(SPEC, ROOT, stdio())
    assert len(calls) == 1
