"""identity and syscall_filter: who the supervisor is next to uid-0 commands, and what their filter refuses.

Each check runs in a forked child, since it changes the process's ids,
signal dispositions or seccomp filters for good; the child reports by its
exit status.
"""

import ctypes
import errno
import os
import signal

import pytest

import identity
import syscall_filter


def in_child(check):
    """Runs check() in a fork; returns what it returned (a small int) or raises with its message."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            result = f"ok {int(check())}"
        except BaseException as error:  # noqa: BLE001
            result = f"error {error!r}"
        os.write(write, result.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        answer = f.read()
    os.waitpid(pid, 0)
    assert answer.startswith("ok "), answer
    return int(answer.split()[1])


def test_both_filters_assemble_within_classic_bpf_jump_range():
    assert 100 < len(syscall_filter.program(False)) < len(syscall_filter.program(True)) < 4096


@pytest.mark.skipif(os.geteuid() != 0, reason="changing ids needs root")
def test_for_uid_0_commands_the_supervisor_keeps_root_but_not_a_real_or_saved_uid_of_0():
    def check():
        identity.separate_from((0, 0))
        assert os.getresuid() == (identity.GUARD_UID, 0, identity.GUARD_UID)
        assert os.getresgid() == (identity.GUARD_GID, 0, identity.GUARD_GID)
        with identity.acting_as((0, 0)):
            assert os.geteuid() == 0
        return 1

    assert in_child(check) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="changing ids needs root")
def test_for_other_commands_the_supervisor_stays_plain_root_and_acts_as_the_user_by_effective_id_only():
    def check():
        identity.separate_from((4242, 4243))
        assert os.getresuid() == (0, 0, 0)
        with identity.acting_as((4242, 4243)):
            assert os.getresuid() == (0, 4242, 0) and os.getresgid() == (0, 4243, 0)
        assert os.getresuid() == (0, 0, 0) and os.getresgid() == (0, 0, 0)
        return 1

    assert in_child(check) == 1


def test_the_supervisor_ignores_what_init_could_forward_and_reapers_restore_the_defaults():
    def check():
        assert identity.ignore_relayed((0, 0)) == []
        for sig in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU, signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGRTMIN):
            assert signal.getsignal(sig) == signal.SIG_IGN, sig
        assert signal.getsignal(signal.SIGCHLD) != signal.SIG_IGN
        assert identity.ignore_relayed((1000, 1000)) == [signal.SIGTERM]
        identity.restore_defaults()
        for sig in (signal.SIGTSTP, signal.SIGTERM, signal.SIGPIPE, signal.SIGRTMIN):
            assert signal.getsignal(sig) == signal.SIG_DFL, sig
        return 1

    assert in_child(check) == 1


def _errno_of(call):
    ctypes.set_errno(0)
    result = call()
    return 0 if result >= 0 else ctypes.get_errno()


def test_the_filter_refuses_set_id_modes_everywhere_and_inotify_only_for_uid_0(tmp_path):
    libc = ctypes.CDLL(None, use_errno=True)
    target = str(tmp_path / "f")
    open(target, "w").close()

    def check(root):
        syscall_filter.install(root=root)
        results = [
            _errno_of(lambda: libc.chmod(target.encode(), 0o4755)),
            _errno_of(lambda: libc.chmod(target.encode(), 0o2755)),
            _errno_of(lambda: libc.chmod(target.encode(), 0o755)),
            _errno_of(lambda: libc.open(str(tmp_path / "g").encode(), os.O_CREAT | os.O_WRONLY, 0o4755)),
            _errno_of(lambda: libc.open(target.encode(), os.O_RDONLY, 0o4755)),  # no O_CREAT: the mode is not used
            _errno_of(lambda: libc.inotify_init1(0)),
        ]
        expected = [errno.EPERM, errno.EPERM, 0, errno.EPERM, 0, errno.ENOSYS if root else 0]
        assert results == expected, results
        return 1

    assert in_child(lambda: check(False)) == 1
    assert in_child(lambda: check(True)) == 1
