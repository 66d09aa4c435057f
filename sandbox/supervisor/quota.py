"""A per-call bound on how much a call grows the workspace's filesystem.

The workspace is a host folder mounted read-write, so what a command writes
there lands on the host's disk, where neither the container's memory limit
nor its tmpfs sizes apply, and RLIMIT_FSIZE bounds only single files.

Two steps keep this cheap and unevadable:
1. While calls run, the supervisor samples the workspace filesystem
   (statvfs: free bytes and inodes), as often as the headroom left needs:
   the time a call would take to use it up at TOP_BYTE_RATE or
   TOP_FILE_RATE, between POLL_INTERVAL (near a limit) and
   MAX_POLL_INTERVAL (far from it). Each sample costs a round trip to the
   file system, which under gVisor slowed a command's writes by 40% at one
   every 5 ms. That measure cannot be hidden from, but it counts every
   writer on the host filesystem.
2. When a call's sample shows more growth than the limit, the supervisor
   confirms it: as the command user, it sums the files changed since the
   call started (ctime, which commands cannot set back; whoever owns them,
   since commands may write files of other owners that their modes open) in the workspace
   and the background-log folder, plus files the session's
   processes still hold open after deleting them. A folder it cannot read, a
   process it cannot inspect (the user hid them), descriptors in flight on a
   unix socket and mappings of deleted files (space it cannot measure)
   count as confirmation.
   The call's tree is frozen (SIGSTOP) while this runs, so it cannot keep
   writing meanwhile. Confirmed: the call is killed (SIGKILL to its tree).
   Not confirmed (another writer on the filesystem): the tree is thawed and
   the call's baseline moves forward.
3. When free space rises (someone, the call or a neighbour, freed space),
   the baseline rises with it, sample by sample, so the growth counted for
   the call never shrinks between scans: what others free is no allowance,
   however late the filesystem shows it (ext4 releases a deleted file's
   blocks when its journal commits). Only a confirmation scan moves the
   count down to what the call really holds, so a call that deletes its own
   files is not killed for them: past the limit, the scan finds less.
   What a sample cannot tell apart: when another writer frees space in the
   same sample as the call writes, the net is all the sample shows, so the
   call's writes hide behind that free (at most what was freed meanwhile;
   a tenant's disk cap still bounds them all).

A background job's allowance renews every BACKGROUND_QUOTA_WINDOW (calls.py):
it runs for hours, during which the session's other commands, whose changes
step 2 cannot tell apart from the job's, also write.
"""

import os
import stat
import time

import identity

POLL_INTERVAL = 0.005
MAX_POLL_INTERVAL = 0.05
# Faster than a command grows a filesystem without fallocate (which the
# syscall filter refuses to reserve with): page-cache writes here reach about
# 3 GiB/s, file creation a few hundred thousand a second.
TOP_BYTE_RATE = 16 * 1024**3
TOP_FILE_RATE = 2_000_000


def _fmt(size):
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024.0
    return str(size)


def _in_flight(pid, fd):
    """True when the unix socket `fd` of `pid` has fds queued in SCM_RIGHTS
    messages. (gVisor's fdinfo does not say, and need not: there a host file
    goes with its last open descriptor, in flight or not, so descriptors in
    flight hold no host disk; measured in test/security/workspace-quota.)"""
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}") as f:
            for line in f:
                if line.startswith("scm_fds:"):
                    return int(line.split()[1]) > 0
    except (OSError, ValueError):
        pass
    return False


def _real_uid(pid):
    """The real uid of `pid` (from status, which shows it even for a process
    that made itself non-dumpable), or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _unlinked(link):
    """Whether a /proc fd or exe link names a deleted file. Linux also shows
    st_nlink 0 for it; gVisor keeps the link count it had (1)."""
    try:
        return os.readlink(link).endswith(" (deleted)")
    except OSError:
        return False


def _maps_deleted(pid, device):
    """True when `pid` maps a deleted file of the filesystem `device`."""
    wanted = f"{os.major(device):02x}:{os.minor(device):02x}"
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                if line.endswith(" (deleted)\n"):
                    fields = line.split()
                    if len(fields) >= 6 and fields[3] == wanted and fields[4] != "0":
                        return True
    except OSError:
        pass
    return False


class Usage:
    """What a scan attributed to the command user since a moment."""

    def __init__(self):
        self.bytes = 0
        self.files = 0
        self.hidden = 0


class WorkspaceQuota:
    def __init__(self, path, extra_roots, identity, max_bytes, max_files):
        self.path = path
        self.roots = [path, *extra_roots]
        self.uid, self.gid = identity
        self.max_bytes = max_bytes
        self.max_files = max_files

    @property
    def enabled(self):
        return self.max_bytes > 0 or self.max_files > 0

    def sample(self):
        """(free bytes, free inodes, wall-clock time) of the workspace filesystem, or None."""
        try:
            st = os.statvfs(self.path)
        except OSError:
            return None
        return st.f_bavail * st.f_frsize, st.f_favail, time.time()

    def over(self, grown_bytes, grown_files):
        return (self.max_bytes > 0 and grown_bytes > self.max_bytes) or (self.max_files > 0 and grown_files > self.max_files)

    def follow_rise(self, base, last, now):
        """Step 3: the baseline raised by whatever free bytes and inodes rose
        from the `last` sample to `now`, so a rise never lowers the count."""
        if base is None or last is None or now is None:
            return base
        return base[0] + max(0, now[0] - last[0]), base[1] + max(0, now[1] - last[1]), base[2]

    def interval(self, base, now):
        """Seconds until the next sample: the call grown by `base` - `now`
        cannot use up its headroom sooner at the top rates."""
        if base is None or now is None:
            return POLL_INTERVAL
        waits = [MAX_POLL_INTERVAL]
        if self.max_bytes > 0:
            waits.append((self.max_bytes - (base[0] - now[0])) / TOP_BYTE_RATE)
        if self.max_files > 0:
            waits.append((self.max_files - (base[1] - now[1])) / TOP_FILE_RATE)
        return max(POLL_INTERVAL, min(waits))

    def grew_past(self, base, now):
        """Step 1: did the filesystem lose more than a limit since `base`?"""
        return base is not None and now is not None and self.over(base[0] - now[0], base[1] - now[1])

    def confirm(self, base, now):
        """Step 2 (the call's tree is frozen meanwhile): (message, base,
        attributed) means kill; (None, new base, attributed) means the growth
        was someone else's."""
        usage = self.scan(since=base[2])
        if usage.hidden or self.over(usage.bytes, usage.files):
            return self.message(usage), base, (usage.bytes, usage.files)
        return None, (now[0] + usage.bytes, now[1] + usage.files, base[2]), (usage.bytes, usage.files)

    def message(self, usage):
        if self.max_bytes > 0 and usage.bytes > self.max_bytes:
            what = f"grew the workspace's disk use by {_fmt(usage.bytes)} (the limit is {_fmt(self.max_bytes)} per command)"
        elif self.max_files > 0 and usage.files > self.max_files:
            what = f"created or changed {usage.files} files in the workspace (the limit is {self.max_files} per command)"
        else:
            what = (
                "grew the workspace's disk use past the limit while holding files where they cannot be measured "
                "(descriptors in flight on a socket, a mapping of a deleted file, or a folder or process hidden from inspection)"
            )
        return f"toolcell: killed: this command {what}"

    def scan(self, since):
        """Sums the user's changes since `since`, seen with the user's own rights."""
        usage = Usage()
        with identity.acting_as((self.uid, self.gid)):
            device = os.lstat(self.path).st_dev
            seen = set()
            for root in self.roots:
                self._walk(root, device, since, usage, seen)
            self._open_unlinked(device, usage, seen)
        return usage

    def _walk(self, root, device, since, usage, seen):
        stack = [(root, False)]
        while stack:
            folder, users_own = stack.pop()
            try:
                entries = os.scandir(folder)
            except PermissionError:
                if users_own:
                    usage.hidden += 1  # the user locked its own folder
                continue
            except OSError:
                continue
            with entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if st.st_dev != device or (st.st_dev, st.st_ino) in seen:
                        continue  # another filesystem (the state folder's cover), or counted
                    seen.add((st.st_dev, st.st_ino))
                    if st.st_ctime >= since:
                        usage.bytes += st.st_blocks * 512
                        usage.files += 1
                    if stat.S_ISDIR(st.st_mode):
                        stack.append((entry.path, st.st_uid == self.uid))

    def _open_unlinked(self, device, usage, seen):
        """Deleted files the session's processes still hold: open fds and a
        deleted executable are measured; what cannot be measured counts as
        hidden: fds in flight (queued in an SCM_RIGHTS message on a unix
        socket, in nobody's fd table; fdinfo's scm_fds, Linux 5.6+) and
        mappings of deleted files on the workspace's filesystem."""
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            # Only the command user's processes hold what its commands wrote. (Linux hides other
            # users' fd tables anyway; gVisor lists root's too, whose sockets would count as hidden.)
            if _real_uid(name) not in (self.uid, None):
                continue
            try:
                fds = os.listdir(f"/proc/{name}/fd")
            except PermissionError:
                if self._hiding(name):
                    usage.hidden += 1  # made itself non-dumpable
                continue
            except OSError:
                continue
            for fd in fds:
                try:
                    st = os.stat(f"/proc/{name}/fd/{fd}")
                except OSError:
                    continue
                if stat.S_ISSOCK(st.st_mode):
                    if _in_flight(name, fd):
                        usage.hidden += 1
                    continue
                self._count_deleted(st, device, usage, seen, _unlinked(f"/proc/{name}/fd/{fd}"))
            try:
                self._count_deleted(os.stat(f"/proc/{name}/exe"), device, usage, seen, _unlinked(f"/proc/{name}/exe"))
            except OSError:
                pass
            if _maps_deleted(name, device):
                usage.hidden += 1

    @staticmethod
    def _count_deleted(st, device, usage, seen, unlinked=False):
        key = (st.st_dev, st.st_ino)
        if (st.st_nlink == 0 or unlinked) and st.st_dev == device and stat.S_ISREG(st.st_mode) and key not in seen:
            seen.add(key)
            usage.bytes += st.st_blocks * 512
            usage.files += 1

    def _hiding(self, pid):
        """A live process of the user whose fds the user may not list: it made
        itself non-dumpable. A process that is exiting or a zombie has no
        memory map any more, which also makes the kernel show its /proc
        entries as root's; it holds nothing for long, so it is not hiding
        (a command killed by SIGXFSZ is one while its shell is frozen). A
        process holding capabilities is toolcell's (docker-init, which shares
        uid 0 with commands of a root-owned workspace; a setpriv starting a
        command): commands never hold any."""
        uid = None
        has_mm = False
        capabilities = 0
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                        return False
                    if line.startswith("Uid:"):
                        uid = int(line.split()[1])
                    elif line.startswith("VmSize:"):
                        has_mm = True
                    elif line.startswith("CapPrm:"):
                        capabilities = int(line.split()[1], 16)
        except OSError:
            return False
        return uid == self.uid and has_mm and capabilities == 0
