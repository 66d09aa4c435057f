#!/bin/bash
# Runs as: ip netns exec <prefix>-<node> unshare --uts --fork bash node-start.sh <prefix> <node> <index> <dir>
# Inside a fresh network namespace (ip netns exec also gave this process its
# own mount namespace and a new /sys), makes this a machine of its own for a
# Docker engine and execs dockerd. Every mount made here lives in this mount
# namespace only and vanishes with its last process.
set -euo pipefail
prefix=$1 node=$2 index=$3 dir=$4
[[ $prefix =~ ^[a-z][a-z0-9]{1,7}$ && $node =~ ^n[0-9]$ && $index =~ ^[0-9]$ && $dir == /var/lib/$prefix/* ]] || {
  echo "node-start: bad arguments" >&2
  exit 2
}

hostname "$prefix-$node"

# ip netns exec remounts /sys for the namespace, which drops the cgroup
# mounts: mount the host's hierarchies again (cgroup v1 hybrid, as on the host).
mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
for c in $(awk 'NR > 1 && $4 == 1 { print $1 }' /proc/cgroups); do
  mkdir -p "/sys/fs/cgroup/$c"
  mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c"
done
mkdir -p /sys/fs/cgroup/systemd /sys/fs/cgroup/unified
mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd
mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified

# The node's whole process tree (dockerd, containerd, shims) and its
# containers (--cgroup-parent) sit under /<prefix>-<node>: a crashed harness
# finds every process it left there.
cg="$prefix-$node"
for h in /sys/fs/cgroup/*/; do
  mkdir -p "$h$cg"
  if [[ -f "$h$cg/cpuset.cpus" ]]; then
    cat "${h}cpuset.cpus" >"$h$cg/cpuset.cpus"
    cat "${h}cpuset.mems" >"$h$cg/cpuset.mems"
  fi
  echo $$ >"$h$cg/cgroup.procs"
done

# The node's own /run (its docker.sock at the usual path, containerd's and
# runc's state) and its own toolcell data folder, as on a machine of its own.
mount --make-rshared /
mount --bind "$dir/run" /run
mountpoint -q /run
mkdir -p /var/lib/toolcell
mount --bind "$dir/toolcell" /var/lib/toolcell
mountpoint -q /var/lib/toolcell

# No registry is reachable: a Swarm task starts from the image the node has
# instead of trying a pull first (and the node has no route to try one).
export DOCKER_SERVICE_PREFER_OFFLINE_IMAGE=1
exec dockerd \
  --config-file "$dir/daemon.json" \
  --data-root "$dir/docker" \
  --exec-root /run/docker \
  --pidfile /run/docker.pid \
  -H unix:///run/docker.sock \
  --bip "10.213.$((100 + index)).1/24" \
  --cgroup-parent "/$cg/docker"
