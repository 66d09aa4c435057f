"""Finding and ending every process of a call, races included.

A call's processes are the descendants of its reaper, which is a child
subreaper, so orphans stay among them. Where a reaper cannot be a subreaper
(gVisor before 2023 allows PR_SET_CHILD_SUBREAPER only to its pid 1), an
orphan goes to the container's init instead, and the call's processes are
found by a marker they cannot shed: the reaper starts every command with one
supplementary group, the call group (CALL_GROUP_BASE + the reaper's pid, a
gid no file or user has), which every descendant inherits and which a
process without CAP_SETGID can neither drop nor change. The functions below
take that group as `group`; None means descendants only.

A tree is ended by freezing it first (SIGSTOP until no new process appears
and every member is stopped), so a process that forks while we walk the tree
cannot outrun us; then SIGTERM + SIGCONT, a grace period, and SIGKILL rounds
until nothing is left. The container's pids limit bounds every loop here.

Each signal goes to the process groups of the processes found as well as to
each of them. A command starts in a session of its own, so its groups hold
only its call's processes, and a group signal reaches every member, those
born after the scan included: the kernel delivers it atomically with fork.
A fork bomb (one group) is stopped by one call, where a scan of its members
would race its births; this matters most where the reaper competes with the
bomb for the CPU and every system call is slow (gVisor). Our own group is
never signalled (tests run calls in it; a command cannot join it, being in
another session).
"""

import os
import signal
import time

_DEAD = (b"Z", b"X", b"x")
_STOPPED = (b"T", b"t")
_FREEZE_ROUNDS = 400
# Above every uid/gid an image or a host account uses, below 2**31 (some
# tools read ids as signed), with room for any pid (at most 2**22).
CALL_GROUP_BASE = 2_000_000_000


def call_group(reaper_pid):
    """The marker group of the calls a reaper runs (see above)."""
    return CALL_GROUP_BASE + reaper_pid


# A process's groups never change (it has no CAP_SETGID): what its status said
# holds for its life, so each (pid, start time) is read once; a kill's many
# rounds then cost one stat read a process, which matters where every system
# call is slow (gVisor). Bounded: cleared when it grows past _CACHE_LIMIT.
_membership = {}
_CACHE_LIMIT = 65536


def _has_group(pid, started, group):
    key = (pid, started, group)
    known = _membership.get(key)
    if known is not None:
        return known
    found = False
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Groups:"):
                    found = str(group).encode() in line.split()
                    break
    except OSError:
        return False  # gone (or going): nothing to cache
    if len(_membership) >= _CACHE_LIMIT:
        _membership.clear()
    _membership[key] = found
    return found


def _scan():
    """{pid: (ppid, state, start time, process group)} for every process in this pid namespace."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        try:
            fields = data[data.rindex(b")") + 2:].split()
            table[int(name)] = (int(fields[1]), fields[0], fields[19], int(fields[2]))
        except (ValueError, IndexError):
            continue  # a task gone between open and read: nothing to scan
    return table


def descendants(root, group=None):
    """{pid: state} of the living (non-zombie) descendants of `root`, and of
    the living processes in `group` when one is given."""
    return {pid: state for pid, (state, _) in _members(root, group).items()}


def _members(root, group):
    """{pid: (state, process group)} of what `descendants` finds."""
    table = _scan()
    children = {}
    for pid, (ppid, _, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            stack.append(child)
            _, state, _, pgrp = table[child]
            if state not in _DEAD:
                found[child] = (state, pgrp)
    if group is not None:
        for pid, (_, state, started, pgrp) in table.items():
            if pid not in found and pid != root and state not in _DEAD and _has_group(pid, started, group):
                found[pid] = (state, pgrp)
    return found


# Where a call's processes are found by their group (no subreaper: gVisor),
# one scan can miss all of them: a scan lists /proc, then reads each entry,
# and a fork bomb's processes each live only long enough to fork (a few ms
# under gVisor, less than a scan of hundreds of entries takes), so every
# listed one may be dead when read while its children, born after the
# listing, were never listed (seen under load: a bomb alive after its call
# reported done). A scan is a true picture only if no process was born while
# it ran: then every process alive at its end was listed and read alive.
# So "nothing is left" needs an empty scan during which /proc gained no pid.
_SNAPSHOT_ROUNDS = 200


def _pids():
    return {name for name in os.listdir("/proc") if name.isdigit()}


def nothing_left(root, group=None):
    """True when `root` has no living descendant (and `group` no living
    member). Without a group the tree is the reaper's own (a subreaper's
    orphans stay in it) and one scan is exact; with one, see above. False
    when births never paused for _SNAPSHOT_ROUNDS scans (callers go on to
    kill, then look again)."""
    if group is None:
        return not descendants(root)
    for _ in range(_SNAPSHOT_ROUNDS):
        listed = _pids()
        if descendants(root, group):
            return False
        if _pids() <= listed:
            return True
    return False


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _is_call_group(pgrp):
    """Whether a group may be signalled: a real one, and not ours (see the module's doc)."""
    return pgrp is not None and pgrp > 1 and pgrp != os.getpgrp()


def _signal_group(pgrp, sig):
    if not _is_call_group(pgrp):
        return
    try:
        os.killpg(pgrp, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group emptied since it was seen


def _signal_all(members, sig):
    """Sends `sig` to the process groups of `members` ({pid: (state, pgrp)}),
    then to each of them (see the module's doc)."""
    for pgrp in {pgrp for _, pgrp in members.values()}:
        _signal_group(pgrp, sig)
    for pid in members:
        _signal(pid, sig)


def freeze(root, group=None):
    """Stops every descendant (and member of `group`); returns them once the
    tree holds still, as {pid: (state, process group)}."""
    stopped = set()
    procs = {}
    for _ in range(_FREEZE_ROUNDS):
        procs = _members(root, group)
        new = {pid: member for pid, member in procs.items() if pid not in stopped}
        _signal_all(new, signal.SIGSTOP)
        stopped.update(new)
        if not new and all(state in _STOPPED for state, _ in procs.values()):
            break
        if not new:
            time.sleep(0.0005)  # a SIGSTOP is still being delivered
    return procs


def thaw(frozen):
    """Resumes what `freeze` stopped (its result): their groups too, since a
    group signal may have stopped a member that no scan then read."""
    _signal_all(frozen, signal.SIGCONT)


def end_tree(root, grace_seconds, reap, group=None, leader=None):
    """Ends every descendant of `root` (and member of `group`): SIGTERM,
    `grace_seconds`, then SIGKILL until none is left. `reap` collects exited
    children of `root`. `leader` is the command's pid: it started a session,
    so its process group holds the call's processes that did not leave it.

    That group is ended first, by group signals alone, before any scan: under
    a fork bomb where system calls are slow (gVisor), a scan of /proc took
    tens of seconds and missed most of the bomb (its entries come and go, or
    cannot be read, while it is listed), so a bomb found only by scans ran on
    until the call's time limit or its container's end. The scans then look
    for what left the group (setsid), in a tree that has gone quiet. (The
    group id comes from no scan: like any pid we signal, it could only name
    another group after the pid space wrapped around meanwhile.)"""
    if _group_exists(leader):
        _signal_group(leader, signal.SIGSTOP)
        if grace_seconds > 0:
            _signal_group(leader, signal.SIGTERM)
            _signal_group(leader, signal.SIGCONT)
            _wait_grace(grace_seconds, reap, lambda: not _group_exists(leader))
        _signal_group(leader, signal.SIGKILL)
    _end_tree(root, grace_seconds, reap, group)


def _group_exists(pgrp):
    if not _is_call_group(pgrp):
        return False
    try:
        os.killpg(pgrp, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists (a reaper has CAP_KILL, so this is not expected)
    return True


def _wait_grace(grace_seconds, reap, ended):
    """Reaps until `ended()` or the grace period is over; whether it ended."""
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline:
        reap()
        if ended():
            return True
        time.sleep(0.005)
    return False


def _end_tree(root, grace_seconds, reap, group):
    procs = freeze(root, group)
    if not procs and nothing_left(root, group):
        return
    if procs and grace_seconds > 0:
        _signal_all(procs, signal.SIGTERM)
        _signal_all(procs, signal.SIGCONT)
        if _wait_grace(grace_seconds, reap, lambda: nothing_left(root, group)):
            return
    while True:
        reap()
        procs = freeze(root, group)
        if not procs:
            if nothing_left(root, group):
                return
            continue
        _signal_all(procs, signal.SIGKILL)
        time.sleep(0.001)


def kill_strays(root, keep, group=None):
    """SIGKILLs every descendant of `root` outside the subtrees of the pids in
    `keep`, and every member of `group`, until none is left (used when a
    reaper died and its orphans were re-parented to the supervisor, or, where
    reapers are no subreapers, to init). Like end_tree it loops until none is
    left: each round stops every stray before killing it, so none forks past
    a round, and the pids limit bounds how many there are (a fixed number of
    rounds let a fork storm outlast it where system calls are slow: gVisor)."""
    while True:
        listed = _pids()
        table = _scan()
        children = {}
        for pid, (ppid, _, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        strays = {}
        stack = [pid for pid in children.get(root, ()) if pid not in keep]
        while stack:
            pid = stack.pop()
            _, state, _, pgrp = table[pid]
            if state not in _DEAD:
                strays[pid] = (state, pgrp)
            stack.extend(children.get(pid, ()))
        if group is not None:
            for pid, (_, state, started, pgrp) in table.items():
                if state not in _DEAD and pid not in strays and _has_group(pid, started, group):
                    strays[pid] = (state, pgrp)
        if not strays:
            # Where strays are found by group, only a scan no birth overlapped is a true picture (see nothing_left).
            if group is None or _pids() <= listed:
                return
            continue
        _signal_all(strays, signal.SIGSTOP)
        _signal_all(strays, signal.SIGKILL)
        time.sleep(0.001)
