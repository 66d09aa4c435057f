"""The workspace growth bound (quota.py): the baseline ratchet, and the
confirmation scan that decides between killing a call and moving its
baseline when another writer grew the filesystem."""

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from quota import WorkspaceQuota

MIB = 1 << 20
# A user no other process on the machine runs as: the scan also counts
# deleted files held open by the user's processes, so a shared user such as
# nobody would let unrelated processes into the figures.
NOBODY = (60000 + os.getpid() % 5000,) * 2


def quota(path="/nonexistent", max_bytes=MIB, max_files=0):
    return WorkspaceQuota(path, [], NOBODY, max_bytes, max_files)


def test_a_rise_in_free_space_raises_the_baseline_so_the_count_never_shrinks():
    q = quota()
    base = (100 * MIB, 1000, 5.0)
    # The call wrote 600 KiB and 10 files: counted.
    wrote = (100 * MIB - 600 * 1024, 990, 6.0)
    assert q.follow_rise(base, base, wrote) == base
    # A neighbour freed 2 MiB and 50 inodes (shown late, mid-call): the baseline rises by as much, the call's count stays.
    freed = (wrote[0] + 2 * MIB, wrote[1] + 50, 7.0)
    raised = q.follow_rise(base, wrote, freed)
    assert raised == (base[0] + 2 * MIB, base[1] + 50, 5.0)
    assert raised[0] - freed[0] == 600 * 1024 and raised[1] - freed[1] == 10
    # Then the call writes 500 KiB more: past the 1 MiB limit, although free space is above the first sample.
    more = (freed[0] - 500 * 1024, freed[1], 8.0)
    assert more[0] > base[0]
    assert q.grew_past(q.follow_rise(raised, freed, more), more)
    # Missing samples leave the baseline as it is.
    assert q.follow_rise(base, None, freed) == base
    assert q.follow_rise(base, wrote, None) == base
    assert q.follow_rise(None, wrote, freed) is None


def test_growth_past_either_limit_is_seen():
    q = quota(max_bytes=MIB, max_files=10)
    base = (100 * MIB, 1000, 0.0)
    assert not q.grew_past(base, (100 * MIB - MIB, 991, 1.0))
    assert q.grew_past(base, (100 * MIB - MIB - 4096, 1000, 1.0))
    assert q.grew_past(base, (100 * MIB, 989, 1.0))
    assert not q.grew_past(None, (0, 0, 1.0))
    assert not quota(max_bytes=0).enabled


@pytest.fixture
def workspace():
    if os.geteuid() != 0:
        pytest.skip("the confirmation scan switches to the command user, which needs root")
    # Not pytest's tmp_path: its parent is private to root, and the scan runs as the command user.
    path = tempfile.mkdtemp(prefix="toolcell-quota-")
    os.chmod(path, 0o755)
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


def test_a_call_that_wrote_past_the_limit_is_confirmed(workspace):
    q = quota(str(workspace))
    base = q.sample()
    time.sleep(0.01)  # ctime granularity: the file's change must come after the baseline
    with open(workspace / "big.bin", "wb") as f:
        f.write(os.urandom(2 * MIB))
        f.flush()
        os.fsync(f.fileno())
    message, kept, attributed = q.confirm(base, q.sample())
    assert message is not None and "grew the workspace's disk use by 2.0 MiB" in message
    assert kept == base
    assert attributed[0] >= 2 * MIB


def test_growth_by_someone_else_moves_the_baseline(workspace):
    (workspace / "old.bin").write_bytes(b"x" * MIB * 2)
    time.sleep(0.01)
    q = quota(str(workspace))
    base = q.sample()
    now = (base[0] - 5 * MIB, base[1] - 3, base[2] + 1)  # the filesystem shrank, but not by the call
    message, moved, attributed = q.confirm(base, now)
    assert message is None
    assert attributed == (0, 0)
    assert moved == (now[0], now[1], base[2])


def test_a_folder_the_user_locked_counts_as_hidden(workspace):
    q = quota(str(workspace))
    base = q.sample()
    locked = workspace / "locked"
    locked.mkdir()
    os.chown(locked, *NOBODY)
    inner = locked / "inner"
    inner.mkdir()
    locked.chmod(0)
    try:
        message, _, _ = q.confirm(base, q.sample())
    finally:
        locked.chmod(0o755)
    assert message is not None and "cannot be measured" in message


def test_space_others_free_does_not_forgive_what_the_call_wrote(workspace):
    # The call wrote 3 MiB; meanwhile a neighbour freed 10 MiB, so free space is above the baseline.
    q = quota(str(workspace), max_bytes=4 * MIB)
    base = q.sample()
    time.sleep(0.01)
    with open(workspace / "written.bin", "wb") as f:
        f.write(os.urandom(3 * MIB))
        f.flush()
        os.fsync(f.fileno())
    risen = (base[0] + 7 * MIB, base[1], base[2] + 1)
    message, moved, attributed = q.confirm(base, risen)
    assert message is None
    assert attributed[0] >= 3 * MIB
    # The baseline follows the freed space with the call's 3 MiB still counted: 2 MiB more is over the limit.
    assert moved[0] == risen[0] + attributed[0]
    assert q.grew_past(moved, (risen[0] - 2 * MIB, risen[1], risen[2] + 1))
