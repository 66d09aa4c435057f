"""Finding and ending every descendant of a process, races included.

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


def descendants(root):
    """{pid: state} of the living (non-zombie) descendants of `root`."""
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
    return found


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def freeze(root):
    """Stops every descendant; returns their pids once the tree holds still."""
    stopped = set()
    procs = {}
    for _ in range(_FREEZE_ROUNDS):
        procs = descendants(root)
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


def end_tree(root, grace_seconds, reap):
    """Ends every descendant of `root`: SIGTERM, `grace_seconds`, then SIGKILL
    until none is left. `reap` collects exited children of `root`."""
    procs = freeze(root)
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
            if not descendants(root):
                return
            time.sleep(0.005)
    while True:
        reap()
        procs = freeze(root)
        if not procs:
            return
        for pid in procs:
            _signal(pid, signal.SIGKILL)
        time.sleep(0.001)


def kill_strays(root, keep):
    """SIGKILLs every descendant of `root` outside the subtrees of the pids in
    `keep`, until none is left (used when a reaper died and its orphans were
    re-parented to the supervisor)."""
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
        if not strays:
            return
        for pid in strays:
            _signal(pid, signal.SIGSTOP)
        for pid in strays:
            _signal(pid, signal.SIGKILL)
        time.sleep(0.001)
