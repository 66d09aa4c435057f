"""An extra seccomp filter for commands, stacked on the engine's profile.

Each reaper installs it on itself when it starts (reaper.py), before any
command exists; every command is the reaper's child and inherits it, as does
everything a command starts, and filters only ever stack. It refuses:

- io_uring (425-427 on every architecture): Docker 20.10's default profile
  predates the io_uring lockdown, and the host kernel's io_uring code has
  been a rich source of privilege escalations. EPERM.
- x32-ABI system calls (a second syscall table that filters written for
  x86_64 numbers tend to miss). EPERM.
- Sockets of any address family but AF_UNIX, AF_INET and AF_INET6, and
  netlink sockets of any protocol but NETLINK_ROUTE (glibc's getaddrinfo and
  getifaddrs, iproute2) and NETLINK_SOCK_DIAG (ss): EAFNOSUPPORT, or
  EPROTONOSUPPORT for netlink, as if the kernel lacked them. With network
  `none` the engine's profile still lets AF_VSOCK through, which reaches
  the hypervisor's host on a VM (its agents listen there), and netlink
  protocols such as KOBJECT_UEVENT (the host's device events) or
  NETFILTER, XFRM, CRYPTO and GENERIC (kernel attack surface no command
  needs). socketpair() is held to AF_UNIX.
- The i386 socketcall(2) multiplexer, whose arguments sit in memory a filter
  cannot read; 32-bit programs use the direct socket calls (Linux 4.3+), which
  get the rule above. EPERM.
- New namespaces: unshare(2), setns(2), and clone(2) with any CLONE_NEW*
  flag (EPERM); clone3(2), whose flags sit in memory, fails with ENOSYS, so
  that glibc falls back to clone. The engine's profile refuses the same to a
  container without CAP_SYS_ADMIN; under gVisor, whose kernel does not load
  that profile, this keeps commands out of user namespaces (and the
  capabilities they hand out inside) all the same.
- A set-user-ID or set-group-ID bit in a mode being set (chmod, fchmod,
  fchmodat, fchmodat2, mknod, mknodat, creat, and open/openat creating a
  file). The workspace is a host folder: a set-id file a command left there
  would run as its owner (root, for a workspace root owns) for whoever on
  the host can reach it. EPERM. openat2, whose mode sits in a struct, is
  refused as absent (ENOSYS; glibc's open never uses it).
- fallocate(2) in the modes that reserve space (the default, KEEP_SIZE,
  ZERO_RANGE, INSERT_RANGE, UNSHARE_RANGE): EOPNOTSUPP, as on a filesystem
  without it. One call reserves up to the 1 GiB file-size limit in
  microseconds without writing a byte, so a loop of them grew the workspace
  by gigabytes between two samples of the per-command growth limit
  (quota.py). glibc's posix_fallocate then writes the blocks instead, at the
  pace of writes, which the sampling keeps up with. Modes that free space
  (PUNCH_HOLE, COLLAPSE_RANGE) pass.
- Only when commands run as uid 0 (`root`): inotify_init and inotify_init1,
  as absent (ENOSYS, so tools fall back to polling). Without a user
  namespace, uid 0 in the container is the host's root for the kernel's
  per-user budgets, and inotify instances (128 per user by default) have no
  per-process limit to hold a command to: a command holding them all would
  break the host's root daemons that watch files.

Only the low 32 bits of an argument are compared: the kernel truncates an
`int` argument the same way, so high bits cannot smuggle a family past.

Installing a filter needs no privilege once no_new_privs is set, which the
command's process does first (Docker's no-new-privileges sets it already).
"""

import ctypes
import errno
import socket
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

_AUDIT_ARCH_X86_64 = 0xC000003E
_AUDIT_ARCH_I386 = 0x40000003
_AUDIT_ARCH_AARCH64 = 0xC00000B7
_AUDIT_ARCH_ARM = 0x40000028
_X32_SYSCALL_BIT = 0x40000000
_IO_URING_FIRST = 425  # io_uring_setup
_IO_URING_LAST = 427  # io_uring_register

# Per architecture: (socket, socketpair, socketcall or None).
_SOCKET_CALLS = {
    _AUDIT_ARCH_X86_64: (41, 53, None),
    _AUDIT_ARCH_I386: (359, 360, 102),
    _AUDIT_ARCH_AARCH64: (198, 199, None),
    _AUDIT_ARCH_ARM: (281, 288, None),
}
# Per architecture: (clone, unshare, setns); clone's flags are its first argument everywhere.
_NAMESPACE_CALLS = {
    _AUDIT_ARCH_X86_64: (56, 272, 308),
    _AUDIT_ARCH_I386: (120, 310, 346),
    _AUDIT_ARCH_AARCH64: (220, 97, 268),
    _AUDIT_ARCH_ARM: (120, 337, 375),
}
_CLONE3 = 435  # on every architecture
# CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

# Per architecture: calls that set a file's mode, as (number, index of the
# mode argument, index of the flags argument or None). open and openat use
# their mode only with O_CREAT or O_TMPFILE, so only then is it checked.
_MODE_CALLS = {
    _AUDIT_ARCH_X86_64: ((90, 1, None), (91, 1, None), (268, 2, None), (452, 2, None), (85, 1, None), (2, 2, 1), (257, 3, 2), (133, 1, None), (259, 2, None)),
    _AUDIT_ARCH_I386: ((15, 1, None), (94, 1, None), (306, 2, None), (452, 2, None), (8, 1, None), (5, 2, 1), (295, 3, 2), (14, 1, None), (297, 2, None)),
    _AUDIT_ARCH_AARCH64: ((52, 1, None), (53, 2, None), (452, 2, None), (56, 3, 2), (33, 2, None)),
    _AUDIT_ARCH_ARM: ((15, 1, None), (94, 1, None), (333, 2, None), (452, 2, None), (8, 1, None), (5, 2, 1), (322, 3, 2), (14, 1, None), (324, 2, None)),
}
_OPENAT2 = 437  # its mode sits in a struct a filter cannot read: refused as if absent (ENOSYS); glibc's open never uses it
_SET_ID_BITS = 0o6000  # S_ISUID | S_ISGID
_CREATE_FLAGS = 0o100 | 0o20000000  # O_CREAT | __O_TMPFILE

# Per architecture: fallocate, whose mode is its second argument.
_FALLOCATE = {
    _AUDIT_ARCH_X86_64: 285,
    _AUDIT_ARCH_I386: 324,
    _AUDIT_ARCH_AARCH64: 47,
    _AUDIT_ARCH_ARM: 352,
}
_FALLOC_FREEING = 0x02 | 0x08  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE (the kernel refuses them with a reserving mode)

# Per architecture: inotify_init and inotify_init1 (aarch64 has only the latter).
_INOTIFY_CALLS = {
    _AUDIT_ARCH_X86_64: (253, 294),
    _AUDIT_ARCH_I386: (291, 332),
    _AUDIT_ARCH_AARCH64: (26,),
    _AUDIT_ARCH_ARM: (316, 360),
}

ALLOWED_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)
NETLINK_ROUTE = 0
NETLINK_SOCK_DIAG = 4
ALLOWED_NETLINK = (NETLINK_ROUTE, NETLINK_SOCK_DIAG)

_RET_ALLOW = 0x7FFF0000


def _errno(code):
    return 0x00050000 | code


# seccomp_data: nr (u32) at 0, arch (u32) at 4, ip (u64) at 8, args[6] (u64) from 16.
# Little-endian only (x86, arm64, arm): an argument's low half is at its offset.
_NR, _ARCH = 0, 4


def _arg_low(index):
    return 16 + 8 * index


class _Assembler:
    """Classic BPF with labels: jumps name their targets; build() resolves them."""

    LD_W_ABS = 0x20
    JEQ_K = 0x15
    JGE_K = 0x35
    JGT_K = 0x25
    JSET_K = 0x45
    RET_K = 0x06

    def __init__(self):
        self.code = []  # (op, jt, jf, k) with jt/jf as labels or None
        self.labels = {}

    def label(self, name):
        self.labels[name] = len(self.code)

    def load(self, offset):
        self.code.append((self.LD_W_ABS, None, None, offset))

    def jump(self, op, k, true, false):
        """Jumps to label `true` when the test holds, else to `false` (None: the next instruction)."""
        self.code.append((op, true, false, k))

    def ret(self, value):
        self.code.append((self.RET_K, None, None, value))

    def build(self):
        out = []
        for index, (op, jt, jf, k) in enumerate(self.code):
            def offset(target):
                if target is None:
                    return 0
                distance = self.labels[target] - index - 1
                if not 0 <= distance <= 255:
                    raise ValueError(f"jump to {target} out of range")
                return distance
            out.append((op, offset(jt), offset(jf), k))
        return out


def _family_checks(asm, prefix, allowed, netlink, allow):
    """Expects the family loaded; allows (jumping to `allow`) or refuses it."""
    for family in allowed:
        target = f"{prefix}_netlink" if netlink and family == socket.AF_NETLINK else allow
        asm.jump(asm.JEQ_K, family, target, None)
    asm.ret(_errno(errno.EAFNOSUPPORT))
    if netlink:
        asm.label(f"{prefix}_netlink")
        asm.load(_arg_low(2))
        for protocol in ALLOWED_NETLINK:
            asm.jump(asm.JEQ_K, protocol, allow, None)
        asm.ret(_errno(errno.EPROTONOSUPPORT))


def _mode_checks(asm, prefix, calls):
    """Expects the syscall number loaded: refuses a set-id mode in the calls that set one."""
    for index, (number, _, _) in enumerate(calls):
        asm.jump(asm.JEQ_K, number, f"{prefix}_mode{index}", None)
    asm.jump(asm.JEQ_K, _OPENAT2, f"{prefix}_absent", None)
    asm.jump(asm.JEQ_K, 0, f"{prefix}_modes_done", f"{prefix}_modes_done")
    for index, (_, mode_arg, flags_arg) in enumerate(calls):
        asm.label(f"{prefix}_mode{index}")
        if flags_arg is not None:
            asm.load(_arg_low(flags_arg))
            asm.jump(asm.JSET_K, _CREATE_FLAGS, None, f"{prefix}_allow")
        asm.load(_arg_low(mode_arg))
        asm.jump(asm.JSET_K, _SET_ID_BITS, f"{prefix}_deny", f"{prefix}_allow")
    asm.label(f"{prefix}_absent")
    asm.ret(_errno(errno.ENOSYS))
    asm.label(f"{prefix}_modes_done")


def program(root=False):
    """The filter as (code, jt, jf, k) instructions. `root`: commands run as
    uid 0, whose per-user kernel budgets are those of the host's root."""
    asm = _Assembler()
    asm.load(_ARCH)
    for arch in _SOCKET_CALLS:
        asm.jump(asm.JEQ_K, arch, f"arch_{arch:x}", None)
    asm.jump(asm.JEQ_K, 0, "common", "common")  # an architecture without socket rules
    # Each architecture's block ends in returns of its own: a classic BPF jump reaches 255 instructions at most.
    for arch, (sock, pair, socketcall) in _SOCKET_CALLS.items():
        prefix = f"a{arch:x}"
        asm.label(f"arch_{arch:x}")
        asm.load(_NR)
        if arch == _AUDIT_ARCH_X86_64:
            asm.jump(asm.JSET_K, _X32_SYSCALL_BIT, f"{prefix}_deny", None)
        asm.jump(asm.JEQ_K, sock, f"socket_{arch:x}", None)
        asm.jump(asm.JEQ_K, pair, f"pair_{arch:x}", None)
        if socketcall is not None:
            asm.jump(asm.JEQ_K, socketcall, f"{prefix}_deny", None)
        clone, unshare, setns = _NAMESPACE_CALLS[arch]
        asm.jump(asm.JEQ_K, unshare, f"{prefix}_deny", None)
        asm.jump(asm.JEQ_K, setns, f"{prefix}_deny", None)
        asm.jump(asm.JEQ_K, _CLONE3, f"{prefix}_absent", None)  # ENOSYS: glibc falls back to clone
        asm.jump(asm.JEQ_K, clone, f"clone_{arch:x}", None)
        asm.jump(asm.JEQ_K, _FALLOCATE[arch], f"fallocate_{arch:x}", None)
        if root:
            for number in _INOTIFY_CALLS[arch]:
                asm.jump(asm.JEQ_K, number, f"{prefix}_absent", None)
        _mode_checks(asm, prefix, _MODE_CALLS[arch])
        asm.jump(asm.JGE_K, _IO_URING_FIRST, None, f"{prefix}_allow")
        asm.jump(asm.JGT_K, _IO_URING_LAST, f"{prefix}_allow", f"{prefix}_deny")
        asm.label(f"clone_{arch:x}")
        asm.load(_arg_low(0))
        asm.jump(asm.JSET_K, CLONE_NEW_FLAGS, f"{prefix}_deny", f"{prefix}_allow")
        asm.label(f"fallocate_{arch:x}")
        asm.load(_arg_low(1))
        asm.jump(asm.JSET_K, _FALLOC_FREEING, f"{prefix}_allow", None)
        asm.ret(_errno(errno.EOPNOTSUPP))
        asm.label(f"socket_{arch:x}")
        asm.load(_arg_low(0))
        _family_checks(asm, f"socket_{arch:x}", ALLOWED_FAMILIES, netlink=True, allow=f"{prefix}_allow")
        asm.label(f"pair_{arch:x}")
        asm.load(_arg_low(0))
        _family_checks(asm, f"pair_{arch:x}", (socket.AF_UNIX,), netlink=False, allow=f"{prefix}_allow")
        asm.label(f"{prefix}_deny")
        asm.ret(_errno(errno.EPERM))
        asm.label(f"{prefix}_allow")
        asm.ret(_RET_ALLOW)
    asm.label("common")
    asm.load(_NR)
    asm.jump(asm.JGE_K, _IO_URING_FIRST, None, "allow")
    asm.jump(asm.JGT_K, _IO_URING_LAST, "allow", "deny")
    asm.label("deny")
    asm.ret(_errno(errno.EPERM))
    asm.label("allow")
    asm.ret(_RET_ALLOW)
    return asm.build()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_LIBC = ctypes.CDLL(None, use_errno=True)


def install(root=False):
    """Installs the filter on the calling process (see program). Raises OSError."""
    if _LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    instructions = program(root)
    code = b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)
    buffer = ctypes.create_string_buffer(code, len(code))
    program_struct = _SockFprog(len(instructions), ctypes.addressof(buffer))
    if _LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program_struct), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
