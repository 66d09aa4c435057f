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
set -euo pipefail

socket=${DOCKER_SOCKET:-/var/run/docker.sock}
name=${TOOLCELL_SERVER_NAME:-toolcell-server}
drain=${TOOLCELL_DRAIN_SECONDS:-30}
data=${TOOLCELL_DATA_DIR:-/var/lib/toolcell}
node=${TOOLCELL_NODE:?TOOLCELL_NODE must name the node}
image=${TOOLCELL_SERVER_IMAGE:?TOOLCELL_SERVER_IMAGE must name the server image}
cmd=${TOOLCELL_SERVER_CMD:-[]}
extra_env=${TOOLCELL_SERVER_ENV:-[]}

say() { printf 'toolcell-launcher %s: %s\n' "$node" "$*"; }

[[ $name =~ ^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$ ]] || { say "bad TOOLCELL_SERVER_NAME"; exit 2; }
[[ $drain =~ ^[0-9]{1,5}$ ]] || { say "bad TOOLCELL_DRAIN_SECONDS"; exit 2; }
[[ $data == /* ]] || { say "TOOLCELL_DATA_DIR must be absolute"; exit 2; }
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
binds=$(jq -nc --arg socket "$socket" --arg data "$data" --argjson secrets "$secrets" \
  '[$socket + ":/var/run/docker.sock", $data + ":" + $data + ":rshared", "/dev:/dev"] + $secrets')

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
      # (NET_ADMIN, NET_RAW, on the node'"'"'s network). Docker'"'"'s default seccomp
      # profile stays, and allows mount once SYS_ADMIN is granted.
      CapAdd: ["SYS_ADMIN", "NET_ADMIN", "NET_RAW"],
      DeviceCgroupRules: ["b 7:* rwm", "c 10:237 rwm"],
      NetworkMode: "host",
      Init: true,
      Binds: $binds,
      RestartPolicy: { Name: "no" },
      LogConfig: { Type: "json-file", Config: { "max-size": "10m", "max-file": "3" } }
    }
  }')

stopping=0
on_term() {
  stopping=1
  say "stopping: draining the server for up to ${drain}s"
  remove_server
  say "server drained and removed"
  exit 0
}
trap on_term TERM INT

api POST "/containers/create?name=$name" -d "$body" >/dev/null
api POST "/containers/$name/start" >/dev/null
say "server $name started from $image"

# Wait for the server in the background so the trap runs as soon as a signal comes.
api POST "/containers/$name/wait" >"/tmp/wait.json" &
wait $! || true
[[ $stopping == 1 ]] && exit 0
status=$(jq -r '.StatusCode // 1' /tmp/wait.json 2>/dev/null || echo 1)
say "server exited with status $status"
api DELETE "/containers/$name?force=1&v=1" >/dev/null 2>&1 || true
exit "$status"
