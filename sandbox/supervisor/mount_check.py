"""Checking that the container mounted the folders the host checked.

The engine resolves a bind mount's source path again when the container
starts, after the host checked it. Something else that can rename folders on
the host (say a sandbox whose workspace encloses this one, swapping a folder
and a symlink in a loop) can make that path name another folder by then. The
host therefore passes the identity (st_dev, st_ino) of each folder it checked
and opened; before anything runs here, each mount point must be exactly
that folder. Otherwise the supervisor refuses to
start, so nothing touches what was mounted by mistake.
"""

import os

import identity


def parse_identity(text):
    """'DEV:INO' -> (dev, ino)."""
    dev, ino = text.split(":")
    return int(dev), int(ino)


def _stat(path, user):
    """lstat as root, or, where root lacks the search right (a workspace of
    mode 0700 owned by a user: the supervisor has no CAP_DAC_OVERRIDE), as the
    command identity, which is that user."""
    try:
        return os.stat(path, follow_symlinks=False)
    except PermissionError:
        with identity.acting_as(user):
            return os.stat(path, follow_symlinks=False)


def mismatches(expected, user):
    """expected: {path: (dev, ino)}; user: the command's (uid, gid).
    Returns a sentence per path that differs."""
    problems = []
    for path, (dev, ino) in expected.items():
        try:
            st = _stat(path, user)
        except OSError as error:
            problems.append(f"{path}: {error.strerror}")
            continue
        if (st.st_dev, st.st_ino) != (dev, ino):
            problems.append(f"{path} is device {st.st_dev} inode {st.st_ino}, the host checked device {dev} inode {ino}")
    return problems
