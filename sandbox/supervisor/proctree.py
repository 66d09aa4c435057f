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
    """{pid: (ppid, state, start time)} for every process in this pid namespace."""
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
        fields = data[data.rindex(b")") + 2:].split()
        table[int(name)] = (int(fields[1]), fields[0], fields[19])
    return table


def descendants(root, group=None):
    """{pid: state} of the living (non-zombie) descendants of `root`, and of
    the living processes in `group` when one is given."""
    table = _scan()
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            stack.append(child)
            state = table[child][1]
            if state not in _DEAD:
                found[child] = state
    if group is not None:
        for pid, (_, state, started) in table.items():
            if pid not in found and pid != root and state not in _DEAD and _has_group(pid, started, group):
                found[pid] = state
    return found


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def freeze(root, group=None):
    """Stops every descendant (and member of `group`); returns their pids once
    the tree holds still."""
    stopped = set()
    procs = {}
    for _ in range(_FREEZE_ROUNDS):
        procs = descendants(root, group)
        new = [pid for pid in procs if pid not in stopped]
        for pid in new:
            _signal(pid, signal.SIGSTOP)
            stopped.add(pid)
        if not new and all(state in _STOPPED for state in procs.values()):
            break
        if not new:
            time.sleep(0.0005)  # a SIGSTOP is still being delivered
    return list(procs)


def thaw(pids):
    """Resumes processes stopped by `freeze`."""
    for pid in pids:
        _signal(pid, signal.SIGCONT)


def end_tree(root, grace_seconds, reap, group=None):
    """Ends every descendant of `root` (and member of `group`): SIGTERM,
    `grace_seconds`, then SIGKILL until none is left. `reap` collects exited
    children of `root`."""
    procs = freeze(root, group)
    if not procs:
        return
    if grace_seconds > 0:
        for pid in procs:
            _signal(pid, signal.SIGTERM)
        for pid in procs:
            _signal(pid, signal.SIGCONT)
        deadline = time.monotonic() + grace_seconds
        while time.monotonic() < deadline:
            reap()
            if not descendants(root, group):
                return
            time.sleep(0.005)
    while True:
        reap()
        procs = freeze(root, group)
        if not procs:
            return
        for pid in procs:
            _signal(pid, signal.SIGKILL)
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
        table = _scan()
        children = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        strays = []
        stack = [pid for pid in children.get(root, ()) if pid not in keep]
        while stack:
            pid = stack.pop()
            if table[pid][1] not in _DEAD:
                strays.append(pid)
            stack.extend(children.get(pid, ()))
        if group is not None:
            strays.extend(pid for pid, (_, state, started) in table.items() if state not in _DEAD and pid not in strays and _has_group(pid, started, group))
        if not strays:
            return
        for pid in strays:
            _signal(pid, signal.SIGSTOP)
        for pid in strays:
            _signal(pid, signal.SIGKILL)
        time.sleep(0.001)
