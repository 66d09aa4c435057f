#!/usr/bin/env bash
# Makes the Docker sandbox usable on a fresh CI machine, idempotently:
#  1. installs what is missing, judged by the programs themselves:
#     debootstrap and git (their tests must
#     run in CI), python3-pytest for the supervisor's own tests, acl for the
#     workspace-owner tests' ACLs, e2fsprogs
#     and mount (losetup) for tenants' disk images, and loads the loop driver;
#  2. makes the engine answer with sandbox/setup-engine.sh: installs docker.io
#     when there is no `dockerd` (a new machine ships the Docker *client*
#     28.x first on PATH but no engine, so `docker` proves nothing), starts
#     it, waits (DOCKERD_WAIT seconds, default 60); then checks itself;
#  3. builds the offline base image toolcell-base:bookworm from Debian
#     packages when absent (sandbox/build-base.sh; no registry needed), and
#     the sandbox image itself when the CLI is already built and says it is
#     missing (.ci/run builds it after `npm ci` otherwise).
# Needs root. Safe to run again: every step checks first.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "docker.sh: $*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v git >/dev/null 2>&1 || missing+=(git)
# Debian's python3 (the supervisor's, as in the image), not a pyenv shim.
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing+=(python3-pytest)
# Tenants' capped workspaces (ext4 images on loop devices, test/hosting/tenant-disk*):
# both are Priority: required on Debian, so only a trimmed image lacks them.
# They live in /sbin, which a non-root PATH leaves out.
export PATH="$PATH:/usr/sbin:/sbin"
for tool in mkfs.ext4 resize2fs e2fsck; do command -v "$tool" >/dev/null 2>&1 || { missing+=(e2fsprogs); break; }; done
command -v losetup >/dev/null 2>&1 || missing+=(mount)
# A real etcd member for the cluster's tests (test/helpers/etcd.ts): Debian's etcd 3.4, as deploy/swarm runs.
[ -x /usr/bin/etcd ] || missing+=(etcd-server)
# getfacl and setfacl: test/security/workspace-owner.test.ts plants ACLs and compares their dump (a new machine has neither).
command -v setfacl >/dev/null 2>&1 && command -v getfacl >/dev/null 2>&1 || missing+=(acl)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]}"
  as_root apt-get update
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y "${missing[@]}"
fi

# Loop devices for the same tests: the driver may be a module not loaded yet.
if [ ! -e /dev/loop-control ]; then
  as_root modprobe loop || log "WARNING: no /dev/loop-control and \`modprobe loop\` failed: tenants' disk caps cannot be mounted"
fi

# The engine: the same script the README's `toolcell sandbox setup` runs. It
# installs docker.io when there is no `dockerd` (see the header) and starts it.
as_root sh sandbox/setup-engine.sh

# Self-check: fail loudly here, not 20 minutes later in a test, when set-up
# left no engine. Both sides are printed because they differ on a new
# machine (client 28.x, Debian's engine 20.10): the client negotiates down.
if ! command -v dockerd >/dev/null 2>&1 || ! server=$(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})' 2>&1); then
  echo "docker.sh: SELF-CHECK FAILED: no Docker engine after set-up (dockerd: $(command -v dockerd || echo missing); docker version: ${server:-no answer})" >&2
  exit 1
fi
log "engine answers: Docker $server at $(command -v dockerd); client $(docker version --format '{{.Client.Version}} (API {{.Client.APIVersion}})' 2>/dev/null || echo unknown) at $(command -v docker)"

if ! docker image inspect toolcell-base:bookworm >/dev/null 2>&1; then
  log "building toolcell-base:bookworm from Debian packages (about a minute)"
  as_root sh sandbox/build-base.sh
fi

if [ -f dist/src/cli/bin.js ] && [ -d node_modules ]; then
  if ! node dist/src/cli/bin.js sandbox status >/dev/null 2>&1; then
    log "building the sandbox image"
    node dist/src/cli/bin.js sandbox build --offline
  fi
  node dist/src/cli/bin.js sandbox status
else
  log "CLI not built yet: build the image with \`node dist/src/cli/bin.js sandbox build --offline\` after npm ci"
fi
