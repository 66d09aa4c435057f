"""An extra seccomp filter for commands, stacked on the engine's profile.

Docker 20.10's default seccomp profile predates the io_uring lockdown, so
io_uring_setup/enter/register reach the host kernel, whose io_uring code has
been a rich source of privilege escalations. Each command's process installs
this small filter right before exec (it is inherited by everything the
command starts, and filters only ever stack): io_uring (425-427 on every
architecture) and x32-ABI system calls (a second syscall table that filters
written for x86_64 numbers tend to miss) fail with EPERM.

Installing a filter needs no privilege once no_new_privs is set, which the
command's process does first (Docker's no-new-privileges sets it already).
"""

import ctypes
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

_LD_W_ABS = 0x20
_JMP_JSET_K = 0x45
_JMP_JGE_K = 0x35
_JMP_JGT_K = 0x25
_RET_K = 0x06
_RET_ERRNO_EPERM = 0x00050000 | 1
_RET_ALLOW = 0x7FFF0000
_X32_SYSCALL_BIT = 0x40000000
_IO_URING_FIRST = 425  # io_uring_setup
_IO_URING_LAST = 427  # io_uring_register

# (code, jt, jf, k); jumps are relative to the next instruction.
_PROGRAM = [
    (_LD_W_ABS, 0, 0, 0),  # 0: A = seccomp_data.nr
    (_JMP_JSET_K, 2, 0, _X32_SYSCALL_BIT),  # 1: x32 ABI -> 4 (deny)
    (_JMP_JGE_K, 0, 2, _IO_URING_FIRST),  # 2: nr < 425 -> 5 (allow)
    (_JMP_JGT_K, 1, 0, _IO_URING_LAST),  # 3: nr > 427 -> 5 (allow), else 4
    (_RET_K, 0, 0, _RET_ERRNO_EPERM),  # 4: deny
    (_RET_K, 0, 0, _RET_ALLOW),  # 5: allow
]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_CODE = b"".join(struct.pack("=HBBI", *instruction) for instruction in _PROGRAM)
_LIBC = ctypes.CDLL(None, use_errno=True)


def install():
    """Installs the filter on the calling process. Raises OSError."""
    if _LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    buffer = ctypes.create_string_buffer(_CODE, len(_CODE))
    program = _SockFprog(len(_PROGRAM), ctypes.addressof(buffer))
    if _LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
