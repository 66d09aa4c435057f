"""workspace_acl: granting the sandbox uid a root-owned workspace."""

import os

import pytest

import workspace_acl

UID = 10001


def _acl_supported(path):
    try:
        os.setxattr(path, workspace_acl._ACCESS, workspace_acl._encode(workspace_acl._with_user(workspace_acl._from_mode(0o755), UID, 7)))
        os.removexattr(path, workspace_acl._ACCESS)
        return True
    except OSError:
        return False


@pytest.fixture
def parent(tmp_path):
    if os.geteuid() != 0 or not _acl_supported(str(tmp_path)):
        pytest.skip("needs root and a filesystem with POSIX ACLs")
    return tmp_path


def _effective(path, uid):
    entries = workspace_acl._read(path, workspace_acl._ACCESS)
    return entries.get((workspace_acl.USER, uid), 0) & entries.get((workspace_acl.MASK, workspace_acl._UNDEFINED_ID), 7)


def test_grant_then_idempotent(parent):
    workspace = parent / "ws"
    workspace.mkdir(mode=0o700)
    (workspace / "file.txt").write_text("x")
    assert workspace_acl.grant(str(workspace), UID)["applied"] is True
    assert _effective(str(workspace), UID) == 7
    assert workspace_acl.grant(str(workspace), UID)["applied"] is False


def test_an_inherited_entry_under_a_narrow_mask_is_granted_again(parent):
    # A parent whose default ACL names the uid (say a workspace that once was /tmp itself):
    # a folder made 0700 below it inherits the entry, but its mask is ---, so the uid has no access.
    outer = parent / "outer"
    outer.mkdir()
    assert workspace_acl.grant(str(outer), UID)["applied"] is True
    workspace = outer / "ws"
    workspace.mkdir(mode=0o700)
    os.chmod(workspace, 0o700)
    assert _effective(str(workspace), UID) == 0
    assert workspace_acl.already_granted(str(workspace), UID) is False
    assert workspace_acl.grant(str(workspace), UID)["applied"] is True
    assert _effective(str(workspace), UID) == 7
