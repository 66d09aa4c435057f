"""Who the supervisor, its reapers and the commands are, and what keeps them apart.

Commands run as the workspace owner's uid and gid (or a hosting tenant's
own), so what they create belongs to that owner and nothing in the
workspace needs its permissions changed. That uid may be 0: a checkout
owned by root. Signals are allowed between processes whose real or saved
uids match, whatever their capabilities, so a uid-0 command could stop or
kill a supervisor that is plain root. Hence, for uid-0 commands only, the
supervisor (and every reaper it forks) takes GUARD as its real and saved
uid and gid, keeping 0 as its effective uid: it keeps its capabilities and
its root file access, and commands (real, effective and saved uid 0, no
capabilities) can neither signal it (no matching real or saved uid, no
CAP_KILL) nor ptrace it (that needs the same uid in all three and a
superset of its capabilities). For any other command uid the supervisor
stays plain root (real and saved 0), which commands cannot signal either.

One more path from a uid-0 command to the supervisor: docker-init (pid 1,
uid 0) forwards the signals it receives to its child, the supervisor. So
the supervisor ignores every signal it can ignore (ignore_relayed), SIGTERM
included when commands run as uid 0; SIGKILL and SIGSTOP are never
forwarded (init cannot catch them). Reapers are not init's children and
restore the default dispositions (restore_defaults), which commands inherit.
"""

import contextlib
import os
import signal

# The image's `sandbox` user: never a command uid when commands run as 0.
GUARD_UID = 10001
GUARD_GID = 10001

# Signals whose disposition cannot or must not change: SIGKILL and SIGSTOP
# cannot be caught (so init never forwards them), SIGCHLD is how the
# supervisor learns of exits, and the synchronous ones report the process's
# own faults (init does not forward them either).
_KEPT = {
    signal.SIGKILL,
    signal.SIGSTOP,
    signal.SIGCHLD,
    signal.SIGSEGV,
    signal.SIGBUS,
    signal.SIGFPE,
    signal.SIGILL,
    signal.SIGTRAP,
    signal.SIGSYS,
    signal.SIGABRT,
}


def _relayable():
    return [sig for sig in signal.valid_signals() if sig not in _KEPT]


def separate_from(command):
    """Called once, at start, as container root: for uid-0 commands, moves the
    real and saved ids to GUARD (see the module docstring). Idempotent for
    other uids. Returns the (uid, gid) the supervisor's real ids now are."""
    uid, _ = command
    if uid == 0:
        os.setresgid(GUARD_GID, 0, GUARD_GID)
        os.setresuid(GUARD_UID, 0, GUARD_UID)
    real = os.getresuid()[0], os.getresgid()[0]
    if real[0] == uid:
        raise OSError("the supervisor's real uid must differ from the commands' uid")
    return real


@contextlib.contextmanager
def acting_as(command):
    """Takes the command's uid and gid as effective ids only (file access as
    the command's user: entering its working directory, creating its log,
    scanning what it wrote); real and saved ids are untouched, so commands can
    never signal the process meanwhile, and the effective ids go back to 0."""
    uid, gid = command
    os.setresgid(-1, gid, -1)
    os.setresuid(-1, uid, -1)
    try:
        yield
    finally:
        os.setresuid(-1, 0, -1)
        os.setresgid(-1, 0, -1)


def ignore_relayed(command):
    """The supervisor's dispositions: every forwardable signal ignored, except
    SIGTERM (a clean shutdown, e.g. `docker stop`) while commands cannot reach
    init (a non-root command uid). Returns the signals left to the caller."""
    uid, _ = command
    handled = [] if uid == 0 else [signal.SIGTERM]
    for sig in _relayable():
        if sig in handled:
            continue
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):
            pass  # glibc's own real-time signals
    return handled


def restore_defaults():
    """A reaper's dispositions: the defaults, which its commands inherit."""
    for sig in _relayable():
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
