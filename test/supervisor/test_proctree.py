"""proctree's call group: how a reaper that is no subreaper (gVisor) still
finds and ends every process of its call, orphans included.

A double-forked process leaves the tree it came from (its parent exits and
it goes to init), as under gVisor, where a reaper cannot keep it as a
subreaper. Its supplementary group, which it cannot drop, still marks it.
Needs root (to set the group), as the supervisor is.
"""

import os
import signal
import time

import pytest

import proctree

GROUP = proctree.call_group(os.getpid())
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="setting a supplementary group needs root")


def _orphan(group):
    """Starts a sleeping grandchild in `group` whose parent exits at once; returns its pid."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.setgroups([group] if group is not None else [])
        if os.fork() == 0:
            os.close(read_end)
            os.write(write_end, str(os.getpid()).encode())
            os.close(write_end)
            time.sleep(60)
            os._exit(0)
        os._exit(0)
    os.close(write_end)
    os.waitpid(child, 0)
    pid = int(os.read(read_end, 32))
    os.close(read_end)
    return pid


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def _wait_while(condition, seconds=10):
    """Polls until `condition()` is false or `seconds` pass; the caller asserts."""
    deadline = time.monotonic() + seconds
    while condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def _kill_all(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass



@needs_root
def test_an_orphan_outside_the_tree_is_found_by_its_group_only():
    pid = _orphan(GROUP)
    try:
        assert pid not in proctree.descendants(os.getpid()), "the orphan left the tree"
        assert pid in proctree.descendants(os.getpid(), GROUP), "its group finds it"
    finally:
        _kill_all([pid])


@needs_root
def test_end_tree_ends_an_orphan_of_the_call_group_and_leaves_others_alone():
    member = _orphan(GROUP)
    stranger = _orphan(GROUP + 1)
    try:
        proctree.end_tree(os.getpid(), 0.05, lambda: None, GROUP)
        _wait_while(lambda: _alive(member))
        assert not _alive(member), "the call's orphan is gone"
        assert _alive(stranger), "another call's process is not touched"
    finally:
        _kill_all([member, stranger])


@needs_root
def test_kill_strays_ends_the_call_group_of_a_dead_reaper():
    member = _orphan(GROUP)
    try:
        proctree.kill_strays(os.getpid(), set(), GROUP)
        _wait_while(lambda: _alive(member))
        assert not _alive(member)
    finally:
        _kill_all([member])


def _born_during_first_scan(monkeypatch):
    """Starts a call-group orphan while the first /proc scan runs, after its
    listing: under gVisor a fork bomb's processes die and are born faster than
    a scan reads them, so a scan can find none of a living bomb."""
    real_scan = proctree._scan
    born = []

    def scan_then_fork():
        table = real_scan()
        if not born:
            born.append(_orphan(GROUP))
        return table

    monkeypatch.setattr(proctree, "_scan", scan_then_fork)
    return born


@needs_root
def test_end_tree_does_not_take_a_scan_that_a_birth_overlapped_for_nothing_left(monkeypatch):
    born = _born_during_first_scan(monkeypatch)
    try:
        proctree.end_tree(os.getpid(), 0, lambda: None, GROUP)
        assert born, "the late process was started"
        assert not _alive(born[0]), "the process born during the empty scan was ended too"
    finally:
        _kill_all(born)


@needs_root
def test_kill_strays_does_not_take_a_scan_that_a_birth_overlapped_for_nothing_left(monkeypatch):
    born = _born_during_first_scan(monkeypatch)
    try:
        proctree.kill_strays(os.getpid(), set(), GROUP)
        assert born and not _alive(born[0])
    finally:
        _kill_all(born)


@needs_root
def test_nothing_left_is_true_when_no_process_of_the_group_lives():
    stranger = _orphan(GROUP + 1)
    try:
        assert proctree.nothing_left(os.getpid(), GROUP)
    finally:
        _kill_all([stranger])


def _session_with_orphan():
    """A child in a session (and process group) of its own, and an orphan of
    it in the same group that left the tree; returns (child, orphan)."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            if os.fork() == 0:
                os.write(write_end, str(os.getpid()).encode())
                time.sleep(60)
            os._exit(0)
        time.sleep(60)
        os._exit(0)
    os.close(write_end)
    orphan = int(os.read(read_end, 32))
    os.close(read_end)
    return child, orphan


def test_a_signal_reaches_the_whole_process_group_of_what_the_scan_found():
    """A process the scan never saw (here: out of the tree; under a fork bomb:
    born after the listing) is ended through the group of one it did see."""
    child, orphan = _session_with_orphan()
    try:
        _wait_while(lambda: orphan in proctree.descendants(os.getpid()))  # its parent is exiting
        assert orphan not in proctree.descendants(os.getpid()), "the scan cannot see the orphan"
        proctree.end_tree(os.getpid(), 0, lambda: _reap(child))
        _wait_while(lambda: _alive(orphan))
        assert not _alive(orphan), "the orphan shared the group of the child the scan found"
    finally:
        _kill_all([child, orphan])
        _reap(child)


@needs_root
def test_our_own_process_group_is_never_signalled():
    """Commands run in sessions of their own: a process in the reaper's group
    is no call's, and a group signal there would reach the reaper itself."""
    stranger = _orphan(None)
    child = os.fork()
    if child == 0:
        time.sleep(60)
        os._exit(0)
    try:
        assert os.getpgid(child) == os.getpgrp() == os.getpgid(stranger)
        proctree.end_tree(os.getpid(), 0, lambda: _reap(child))
        assert not _alive(child)
        assert _alive(stranger), "a process of our group outside the tree is left alone"
    finally:
        _kill_all([child, stranger])
        _reap(child)


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _state(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0]


def test_thaw_resumes_what_a_group_signal_stopped_unseen():
    """A quota check freezes a call and may thaw it: a member of a frozen
    group that no scan read must not stay stopped."""
    child, orphan = _session_with_orphan()
    try:
        _wait_while(lambda: orphan in proctree.descendants(os.getpid()))
        frozen = proctree.freeze(os.getpid())
        assert orphan not in frozen and child in frozen
        _wait_while(lambda: _state(orphan) not in (b"T", b"t"))
        assert _state(orphan) in (b"T", b"t"), "the group signal stopped it"
        proctree.thaw(frozen)
        _wait_while(lambda: _state(orphan) in (b"T", b"t"))
        assert _state(orphan) not in (b"T", b"t"), "thawed with its group"
    finally:
        _kill_all([child, orphan])
        _reap(child)
