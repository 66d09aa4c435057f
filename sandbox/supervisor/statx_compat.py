"""`ls -l` and `stat` on gVisor: the statx-compat library, where it is needed.

gVisor's statx and fstatat (Debian's runsc, 2022) refuse AT_NO_AUTOMOUNT
with EINVAL, which coreutils' ls and stat always pass. The image carries a
small library that asks again without the flag (sandbox/compat/). A probe
at start-up tells whether this kernel refuses the flag; only then do
commands get the library in LD_PRELOAD (after any the command's
environment names). On Linux nothing changes.
"""

import ctypes
import errno
import platform

LIBRARY = "/usr/lib/toolcell/statx-compat.so"
AT_FDCWD = -100
AT_NO_AUTOMOUNT = 0x800
_NEWFSTATAT = {"x86_64": 262, "aarch64": 79}


def _refuses_no_automount():
    number = _NEWFSTATAT.get(platform.machine())
    if number is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(256)
    if libc.syscall(number, AT_FDCWD, b"/", buffer, AT_NO_AUTOMOUNT) == 0:
        return False
    return ctypes.get_errno() == errno.EINVAL


NEEDED = _refuses_no_automount()


def environment(env):
    """A command's environment with the library preloaded when this kernel needs it."""
    if not NEEDED:
        return env
    preload = env.get("LD_PRELOAD")
    return {**env, "LD_PRELOAD": f"{preload}:{LIBRARY}" if preload else LIBRARY}
