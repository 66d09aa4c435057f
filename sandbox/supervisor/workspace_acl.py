"""Granting the sandbox user access to a root-owned workspace with POSIX ACLs.

When the workspace belongs to root (CI, containers, root shells), commands
still run as the unprivileged sandbox uid. The supervisor then adds a named
user entry `u:<uid>:rwX` to every folder and regular file of the tree, and
the same default entry (inherited by what is created later) to every folder,
except the host-private state folder `.toolcell/`. It runs as container root,
which owns those files, so no capability beyond ownership is needed; files
owned by other users are left alone (counted as errors). Idempotent: when the
root folder already carries both entries, nothing is walked again.

The walk never leaves the checked tree, even while something renames folders
and symlinks inside it: each folder is opened relative to its parent with
O_NOFOLLOW|O_DIRECTORY and must be the very folder that was listed (same
device and inode), files are opened O_PATH|O_NOFOLLOW and must be regular,
entries on another filesystem are skipped, and ACLs are written through the
opened descriptors, never through a path that could be swapped.
"""

import errno
import os
import stat
import struct

_ACCESS = "system.posix_acl_access"
_DEFAULT = "system.posix_acl_default"
_VERSION = 2
_HEADER = struct.Struct("<I")
_ENTRY = struct.Struct("<HHI")
_UNDEFINED_ID = 0xFFFFFFFF
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


def _parse(blob):
    """{(tag, id): perm} of an ACL xattr."""
    entries = {}
    for offset in range(_HEADER.size, len(blob) - _ENTRY.size + 1, _ENTRY.size):
        tag, perm, ident = _ENTRY.unpack_from(blob, offset)
        entries[(tag, ident if tag in (USER, GROUP) else _UNDEFINED_ID)] = perm
    return entries


def _encode(entries):
    body = b"".join(_ENTRY.pack(tag, perm, ident) for (tag, ident), perm in sorted(entries.items()))
    return _HEADER.pack(_VERSION) + body


def _from_mode(mode):
    return {
        (USER_OBJ, _UNDEFINED_ID): (mode >> 6) & 7,
        (GROUP_OBJ, _UNDEFINED_ID): (mode >> 3) & 7,
        (OTHER, _UNDEFINED_ID): mode & 7,
    }


def _with_user(entries, uid, perm):
    """Adds (or widens) the named user entry and recomputes the mask as setfacl -m does."""
    entries = dict(entries)
    entries[(USER, uid)] = entries.get((USER, uid), 0) | perm
    group_class = 0
    for (tag, _), value in entries.items():
        if tag in (USER, GROUP, GROUP_OBJ):
            group_class |= value
    entries[(MASK, _UNDEFINED_ID)] = group_class
    return entries


def _read(target, name):
    try:
        return _parse(os.getxattr(target, name))
    except OSError as error:
        if error.errno == errno.ENODATA:
            return None
        raise


def _has_user_entry(target, name, uid):
    """True when the named entry grants rwx in effect: a mask narrower than the
    entry (a folder made 0700 under a parent whose default ACL names the uid
    inherits the entry but a --- mask) does not count as granted."""
    try:
        entries = _read(target, name)
    except OSError:
        return False
    if entries is None:
        return False
    effective = entries.get((USER, uid), 0) & entries.get((MASK, _UNDEFINED_ID), 0o7)
    return effective & 0o7 == 0o7


def already_granted(workspace, uid):
    return _has_user_entry(workspace, _ACCESS, uid) and _has_user_entry(workspace, _DEFAULT, uid)


def _grant_one(target, st, uid):
    """Adds u:uid:rwX (and the default entry on a folder) to the object `target` names."""
    is_dir = stat.S_ISDIR(st.st_mode)
    access = _read(target, _ACCESS) or _from_mode(st.st_mode)
    execute = 1 if is_dir or st.st_mode & 0o111 else 0
    os.setxattr(target, _ACCESS, _encode(_with_user(access, uid, 6 | execute)))
    if is_dir:
        default = _read(target, _DEFAULT)
        if default is None:
            default = {key: perm for key, perm in access.items() if key[0] in (USER_OBJ, GROUP_OBJ, OTHER)}
        os.setxattr(target, _DEFAULT, _encode(_with_user(default, uid, 7)))


class _Walk:
    def __init__(self, uid, device):
        self.uid = uid
        self.device = device
        self.errors = []

    def grant(self, target, st):
        try:
            _grant_one(target, st, self.uid)
        except OSError as error:
            self.errors.append(f"{error.strerror}")

    def folder(self, fd, skip=()):
        """Grants the folder open as `fd` and everything below it, depth first:
        only the folders on the current path are open at once."""
        self.grant(fd, os.fstat(fd))
        stack = [(fd, self.names(fd, skip))]
        while stack:
            parent, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if parent != fd:
                    os.close(parent)
                continue
            child = self.open_child(parent, name)
            if child is not None:
                stack.append((child, self.names(child, ())))

    def names(self, fd, skip):
        try:
            return iter([name for name in os.listdir(fd) if name not in skip])
        except OSError as error:
            self.errors.append(error.strerror)
            return iter(())

    def open_child(self, parent, name):
        """Grants one entry; returns the fd of a folder still to list, else None."""
        try:
            listed = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError:
            return None
        if listed.st_dev != self.device or not (stat.S_ISDIR(listed.st_mode) or stat.S_ISREG(listed.st_mode)):
            return None  # another filesystem, a symlink or a special file
        try:
            fd = os.open(name, _DIR_FLAGS if stat.S_ISDIR(listed.st_mode) else _PATH_FLAGS, dir_fd=parent)
        except OSError:
            return None  # replaced since it was listed (ELOOP, ENOTDIR) or gone
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (listed.st_dev, listed.st_ino):
            os.close(fd)
            return None
        if stat.S_ISDIR(opened.st_mode):
            self.grant(fd, opened)
            return fd
        # An O_PATH descriptor takes no xattr calls; its /proc link names exactly this file.
        self.grant(f"/proc/self/fd/{fd}", opened)
        os.close(fd)
        return None


def grant(workspace, uid, skip=(".toolcell",)):
    """Returns {"applied": bool, "errors": int, "message"?: str}. The state
    folder (`skip`, at the top only) is host-private and never gets entries."""
    if already_granted(workspace, uid):
        return {"applied": False, "errors": 0}
    root = os.open(workspace, _DIR_FLAGS)
    try:
        walk = _Walk(uid, os.fstat(root).st_dev)
        walk.folder(root, skip=set(skip))
    finally:
        os.close(root)
    report = {"applied": True, "errors": len(walk.errors)}
    if walk.errors:
        report["message"] = walk.errors[0]
    return report
