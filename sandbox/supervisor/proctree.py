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


def _has_group(pid, group):
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Groups:"):
                    return str(group).encode() in line.split()
    except OSError:
        pass
    return False


def _scan():
    """{pid: (ppid, state)} for every process in this pid namespace."""
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
        table[int(name)] = (int(fields[1]), fields[0])
    return table


def descendants(root, group=None):
    """{pid: state} of the living (non-zombie) descendants of `root`, and of
    the living processes in `group` when one is given."""
    table = _scan()
    children = {}
    for pid, (ppid, _) in table.items():
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
        for pid, (_, state) in table.items():
            if pid not in found and pid != root and state not in _DEAD and _has_group(pid, group):
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
    reapers are no subreapers, to init)."""
    for _ in range(_FREEZE_ROUNDS):
        table = _scan()
        children = {}
        for pid, (ppid, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        strays = []
        stack = [pid for pid in children.get(root, ()) if pid not in keep]
        while stack:
            pid = stack.pop()
            if table[pid][1] not in _DEAD:
                strays.append(pid)
            stack.extend(children.get(pid, ()))
        if group is not None:
            strays.extend(pid for pid, (_, state) in table.items() if state not in _DEAD and pid not in strays and _has_group(pid, group))
        if not strays:
            return
        for pid in strays:
            _signal(pid, signal.SIGSTOP)
        for pid in strays:
            _signal(pid, signal.SIGKILL)
        time.sleep(0.001)
