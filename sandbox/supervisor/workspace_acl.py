"""Granting the sandbox user access to a root-owned workspace with POSIX ACLs.

When the workspace belongs to root (CI, containers, root shells), commands
still run as the unprivileged sandbox uid. The supervisor then adds a named
user entry `u:<uid>:rwX` plus the same default entry (inherited by files and
folders created later) to the whole tree, except the host-private state folder
`.toolcell/`. It runs as container root, which
owns those files, so no capability beyond ownership is needed; files owned by
other users are left alone (counted as errors). Idempotent: when the root
folder already carries both entries, nothing is walked again.
"""

import os
import struct
import subprocess

_ACL_USER = 0x02
_ENTRY = struct.Struct("<HHI")


def _has_user_entry(path, attribute, uid):
    try:
        blob = os.getxattr(path, attribute, follow_symlinks=False)
    except OSError:
        return False
    for offset in range(4, len(blob) - _ENTRY.size + 1, _ENTRY.size):
        tag, perm, ident = _ENTRY.unpack_from(blob, offset)
        if tag == _ACL_USER and ident == uid and perm & 0o7 == 0o7:
            return True
    return False


def already_granted(workspace, uid):
    return _has_user_entry(workspace, "system.posix_acl_access", uid) and _has_user_entry(
        workspace, "system.posix_acl_default", uid
    )


def _setfacl(arguments):
    result = subprocess.run(
        ["setfacl", *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    return result.stderr.decode("utf-8", "replace").strip().splitlines()


def grant(workspace, uid, skip=(".toolcell",)):
    """Returns {"applied": bool, "errors": int, "message"?: str}. The state
    folder (`skip`) is host-private and never gets entries."""
    if already_granted(workspace, uid):
        return {"applied": False, "errors": 0}
    entries = f"u:{uid}:rwX,d:u:{uid}:rwX"
    errors = _setfacl(["-m", entries, workspace])
    targets = [os.path.join(workspace, name) for name in sorted(os.listdir(workspace)) if name not in skip]
    if targets:
        # -P: never follow symlinks (the tree may hold links planted by commands).
        errors += _setfacl(["-R", "-P", "-m", entries, "--", *targets])
    report = {"applied": True, "errors": len(errors)}
    if errors:
        report["message"] = errors[0]
    return report
