#!/bin/sh
# Makes a Docker engine answer on this machine, for toolcell's sandbox.
#   - An engine already answers (a system service, Docker Desktop, DOCKER_HOST):
#     nothing to do.
#   - `dockerd` is installed but not running: start it in the background.
#   - No `dockerd` at all: install Debian's docker.io with apt-get, then start it.
#     Judge by `dockerd`, never by `docker`: a machine may carry only the
#     client (new machines here ship client 28.2 first on PATH and no engine).
#     debootstrap comes along when missing: a machine without an engine often
#     has no image registry either, and the image's offline base needs it.
# The client and the engine may differ in version (client 28.2, Debian's engine
# 20.10): the client negotiates down to the engine's API (1.41), and toolcell
# talks to the engine through dockerode at whatever API the engine offers.
#
# Needs root for the last two cases (or sudo). Safe to run again.
# Environment: DOCKERD_WAIT (seconds to wait for the engine, default 60),
# TOOLCELL_DOCKERD_LOG (default /var/log/toolcell-dockerd.log).
# `toolcell sandbox setup` runs this, then builds the sandbox image.
set -eu

say() { echo "setup-engine: $*" >&2; }
fail() { say "$*"; exit 1; }
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else fail "root is needed to $* (run as root, or install and start Docker yourself: https://docs.docker.com/engine/install/)"
  fi
}
answers() { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }

if answers; then
  say "the Docker engine answers: $(docker version --format 'engine {{.Server.Version}} (API {{.Server.APIVersion}}), client {{.Client.Version}}' 2>/dev/null)"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || fail "no Docker engine here and no apt-get to install one: install Docker (https://docs.docker.com/engine/install/) and start it"
  packages=docker.io
  command -v debootstrap >/dev/null 2>&1 || packages="$packages debootstrap"
  say "no dockerd on this machine: installing $packages (Debian packages)"
  as_root apt-get update -q
  # shellcheck disable=SC2086 # the package list is meant to split
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q $packages
fi

log="${TOOLCELL_DOCKERD_LOG:-/var/log/toolcell-dockerd.log}"
say "starting dockerd in the background (log: $log)"
as_root sh -c "setsid nohup dockerd >'$log' 2>&1 </dev/null &"
wait_s="${DOCKERD_WAIT:-60}"
deadline=$(( $(date +%s) + wait_s ))
until answers; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    say "dockerd did not answer within $wait_s s; its last log lines:"
    as_root tail -n 20 "$log" >&2 || true
    exit 1
  fi
  sleep 1
done
say "the Docker engine answers: $(docker version --format 'engine {{.Server.Version}} (API {{.Server.APIVersion}}), client {{.Client.Version}}' 2>/dev/null)"
