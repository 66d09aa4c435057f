#!/bin/bash
# toolcell launcher: the Swarm task of the `server` service, one per node.
#
# A Swarm task on engine 20.10 cannot be privileged, get devices or a
# security-opt, so it cannot loop-mount tenant disks, write the egress
# firewall or run hardened sandbox containers itself. This task asks the
# node's own engine (its socket, bind-mounted) for a container that can: the
# node's toolcell server, with the capabilities and devices it needs (not
# --privileged: see HostConfig below), on the node's network, with the node's
# data folder shared back to the engine (rshared) so that the disks it mounts
# are what the sandbox containers it starts see. The launcher supervises it:
#   - a server left by a launcher that was killed is drained and removed first;
#   - SIGTERM (docker service update/rm, node drain) drains the server
#     (SIGTERM, then SIGKILL after TOOLCELL_DRAIN_SECONDS) and removes it;
#   - the server exiting on its own ends the task with its status, and Swarm's
#     restart policy starts a new one.
# The task's stop_grace_period must exceed TOOLCELL_DRAIN_SECONDS.
#
# Environment (stack.yml sets it):
#   TOOLCELL_SERVER_IMAGE   image of the server (required; present on the node)
#   TOOLCELL_SERVER_CMD     the server's command as a JSON array; @NODE_ADDRESS@ in it becomes
#                           the node's address in the Swarm (where the other nodes reach it)
#   TOOLCELL_SERVER_ENV     extra environment for the server, a JSON array of "K=V"
#   TOOLCELL_NODE           the node's name ({{.Node.Hostname}}), given to the server
#   TOOLCELL_DATA_DIR       the node's data folder (default /var/lib/toolcell)
#   TOOLCELL_DRAIN_SECONDS  drain time given to the server on stop (default 30)
#   TOOLCELL_SERVER_NAME    the container's name on the node (default toolcell-server)
#   DOCKER_SOCKET           the node engine's socket, at the same path on the node and in this
#                           task (default /var/run/docker.sock): the server gets it bound too
#   TOOLCELL_MOUNTS_DIR     the node folder for the server's private mount points (default
#                           /run/toolcell/mounts, where toolcell makes them), bound rshared
#   TOOLCELL_SERVER_PORT    the server's port on the node (default 8080): once its /healthz answers
#                           over TLS (the cluster's CA, name toolcell-server), the launcher writes
#                           /tmp/server-up, which the service's healthcheck reads, so that a rolling
#                           update moves to the next node only once this one serves again
#   TOOLCELL_AUDIT_FILE     the server's audit log (its path in the server): each new line is
#                           relayed to this task's stdout
#
# Every node's lines in one place: this task's stdout carries the server's own output (its
# stdout and stderr, from the engine's log stream) and, when TOOLCELL_AUDIT_FILE is set, every
# new line of its audit log, so `docker service logs toolcell_server` (or the log driver set on
# the service) shows them for every node, each audit line with its `node`.
set -euo pipefail

socket=${DOCKER_SOCKET:-/var/run/docker.sock}
name=${TOOLCELL_SERVER_NAME:-toolcell-server}
drain=${TOOLCELL_DRAIN_SECONDS:-30}
data=${TOOLCELL_DATA_DIR:-/var/lib/toolcell}
node=${TOOLCELL_NODE:?TOOLCELL_NODE must name the node}
image=${TOOLCELL_SERVER_IMAGE:?TOOLCELL_SERVER_IMAGE must name the server image}
cmd=${TOOLCELL_SERVER_CMD:-[]}
extra_env=${TOOLCELL_SERVER_ENV:-[]}
mounts=${TOOLCELL_MOUNTS_DIR:-/run/toolcell/mounts}
audit=${TOOLCELL_AUDIT_FILE:-}
port=${TOOLCELL_SERVER_PORT:-8080}

say() { printf 'toolcell-launcher %s: %s\n' "$node" "$*"; }

[[ $name =~ ^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$ ]] || { say "bad TOOLCELL_SERVER_NAME"; exit 2; }
[[ $drain =~ ^[0-9]{1,5}$ ]] || { say "bad TOOLCELL_DRAIN_SECONDS"; exit 2; }
[[ $data == /* ]] || { say "TOOLCELL_DATA_DIR must be absolute"; exit 2; }
[[ $port =~ ^[0-9]{1,5}$ ]] || { say "bad TOOLCELL_SERVER_PORT"; exit 2; }
[[ $mounts == /* ]] || { say "TOOLCELL_MOUNTS_DIR must be absolute"; exit 2; }
[[ -z $audit || $audit == /* ]] || { say "TOOLCELL_AUDIT_FILE must be absolute"; exit 2; }
jq -e 'type == "array" and all(type == "string")' <<<"$cmd" >/dev/null || { say "TOOLCELL_SERVER_CMD must be a JSON array of strings"; exit 2; }
jq -e 'type == "array" and all(type == "string")' <<<"$extra_env" >/dev/null || { say "TOOLCELL_SERVER_ENV must be a JSON array of strings"; exit 2; }

# The node's engine API (the same API version toolcell's dockerode speaks).
# Prints the answer; on an error status, says the engine's message and fails.
api() {
  local method=$1 path=$2 out status
  shift 2
  out=$(curl -sS --unix-socket "$socket" -X "$method" -H 'Content-Type: application/json' -w '\n%{http_code}' "$@" "http://engine/v1.41$path") || return 1
  status=${out##*$'\n'}
  out=${out%$'\n'*}
  if [[ $status != 2* ]]; then
    say "engine: $method $path: $status $(jq -r '.message // .' <<<"$out" 2>/dev/null || echo "$out")" >&2
    return 1
  fi
  printf '%s' "$out"
}

# This task's own container id, from the engine's mounts of /etc/hostname.
self=$(sed -n 's#.*/containers/\([0-9a-f]\{64\}\)/hostname .*#\1#p' /proc/self/mountinfo | head -n 1)
[[ -n $self ]] || { say "cannot find this task's container id"; exit 1; }
info=$(api GET /info)
root=$(jq -r .DockerRootDir <<<"$info")
address=$(jq -r '.Swarm.NodeAddr // empty' <<<"$info")
[[ -n $address ]] || { say "the engine names no Swarm address for this node"; exit 1; }
cmd=$(jq -c --arg address "$address" 'map(gsub("@NODE_ADDRESS@"; $address))' <<<"$cmd")

remove_server() {
  api POST "/containers/$name/stop?t=$drain" >/dev/null 2>&1 || true
  api DELETE "/containers/$name?force=1&v=1" >/dev/null 2>&1 || true
}

if api GET "/containers/$name/json" >/dev/null 2>&1; then
  say "a server from an earlier launcher is still there: draining and removing it"
  remove_server
fi

# The task's Swarm secrets (TLS keys, tokens) live on a tmpfs the engine
# mounted for this task, one file per secret named by its id; the server gets
# each one, read-only, at the same /run/secrets/<name> as this task: nothing
# is written to the node's disk. (/proc/self/mountinfo: field 4 is the file
# on that tmpfs, field 5 where it is mounted here.)
secrets=$(awk -v base="$root/containers/$self/mounts/secrets" '$5 ~ "^/run/secrets/[^/]+$" { print base $4 ":" $5 ":ro" }' /proc/self/mountinfo | jq -R . | jq -sc .)
# The private mount points (toolcell's PRIVATE_MOUNT_ROOT): a workspace is bound into a sandbox
# from a mount the server made of the folder it opened and checked, so a path swapped under it
# cannot redirect the sandbox's mount. The engine resolves that path in the node's mount
# namespace: the folder is the node's, rshared, so the server's mounts there reach the engine.
binds=$(jq -nc --arg socket "$socket" --arg data "$data" --arg mounts "$mounts" --argjson secrets "$secrets" \
  '[$socket + ":/var/run/docker.sock", $data + ":" + $data + ":rshared", $mounts + ":/run/toolcell/mounts:rshared", "/dev:/dev"] + $secrets')

body=$(jq -nc --arg image "$image" --argjson cmd "$cmd" --argjson env "$extra_env" --arg node "$node" --arg address "$address" \
  --arg self "$self" --argjson drain "$drain" --argjson binds "$binds" '{
    Image: $image,
    Cmd: (if ($cmd | length) > 0 then $cmd else null end),
    Env: (["TOOLCELL_NODE=" + $node, "TOOLCELL_NODE_ADDRESS=" + $address] + $env),
    Labels: { "dev.toolcell.swarm.launcher": $self },
    StopSignal: "SIGTERM",
    StopTimeout: $drain,
    HostConfig: {
      # The power the server needs, named one by one rather than Privileged:
      # mount and losetup (SYS_ADMIN, the loop devices: block major 7 and
      # /dev/loop-control, seen through the node'"'"'s /dev), the egress firewall
      # (NET_ADMIN, NET_RAW, on the node'"'"'s network), its event loop at nice -5
      # (SYS_NICE). Docker'"'"'s default seccomp profile stays, and allows mount
      # once SYS_ADMIN is granted.
      CapAdd: ["SYS_ADMIN", "NET_ADMIN", "NET_RAW", "SYS_NICE"],
      DeviceCgroupRules: ["b 7:* rwm", "c 10:237 rwm"],
      NetworkMode: "host",
      Init: true,
      Binds: $binds,
      RestartPolicy: { Name: "no" },
      LogConfig: { Type: "json-file", Config: { "max-size": "10m", "max-file": "3" } }
    }
  }')

relays=()
stop_relays() { [[ ${#relays[@]} -eq 0 ]] || kill "${relays[@]}" 2>/dev/null || true; }
stopping=0
on_term() {
  stopping=1
  say "stopping: draining the server for up to ${drain}s"
  remove_server
  say "server drained and removed"
  stop_relays
  exit 0
}
trap on_term TERM INT

api POST "/containers/create?name=$name" -d "$body" >/dev/null
api POST "/containers/$name/start" >/dev/null
say "server $name started from $image"
# The relays (see the top), until this task ends. The engine multiplexes a container's stdout and
# stderr in frames (a byte for the stream, three zeros, the length as 32 bits big-endian, then
# the bytes): perl takes the bytes out.
demux() { perl -e '$| = 1; while (read(STDIN, $h, 8) == 8) { $n = unpack("x4 N", $h); read(STDIN, $b, $n) == $n or last; print $b }'; }
# The server's own output.
curl -sS -N --unix-socket "$socket" "http://engine/v1.41/containers/$name/logs?follow=1&stdout=1&stderr=1" 2>/dev/null | demux &
relays+=($!)
if [[ -n $audit ]]; then
  # Its audit log, read in the server (the file is on the node; this task needs no mount of it):
  # tail -F follows the file across a rotation by rename (logrotate) and waits for it to appear.
  exec_id=$(api POST "/containers/$name/exec" -d "$(jq -nc --arg file "$audit" '{AttachStdout: true, AttachStderr: false, Cmd: ["tail", "-n", "0", "-F", $file]}')" | jq -r .Id) &&
    { curl -sS -N --unix-socket "$socket" -X POST -H 'Content-Type: application/json' -d '{"Detach":false,"Tty":false}' \
      "http://engine/v1.41/exec/$exec_id/start" 2>/dev/null | demux & relays+=($!); } ||
    say "cannot follow the audit log $audit: its lines stay in the file only"
fi

# Healthy once the server answers: until then Swarm counts this task as starting.
rm -f /tmp/server-up
(
  until curl -sf -o /dev/null -m 2 --cacert /run/secrets/toolcell-ca.pem --resolve "toolcell-server:$port:$address" "https://toolcell-server:$port/healthz"; do sleep 1; done
  touch /tmp/server-up
  say "server answers on port $port"
) &
relays+=($!)

# Wait for the server in the background so the trap runs as soon as a signal comes.
api POST "/containers/$name/wait" >"/tmp/wait.json" &
wait $! || true
[[ $stopping == 1 ]] && exit 0
status=$(jq -r '.StatusCode // 1' /tmp/wait.json 2>/dev/null || echo 1)
say "server exited with status $status"
api DELETE "/containers/$name?force=1&v=1" >/dev/null 2>&1 || true
stop_relays
exit "$status"
