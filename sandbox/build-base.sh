#!/bin/sh
# Builds the sandbox's base image from Debian packages, for machines that
# cannot reach an image registry (only an apt mirror):
#   debootstrap --variant=minbase bookworm DIR
#   tar -C DIR -c . | docker import - toolcell-base:bookworm
# Takes about a minute. Needs root, debootstrap and the docker CLI.
# `toolcell sandbox build --offline` runs this, then builds sandbox/Dockerfile
# with --build-arg BASE=toolcell-base:bookworm.
#
# Environment: TOOLCELL_BASE_TAG (default toolcell-base:bookworm),
# DEBIAN_MIRROR (default http://deb.debian.org/debian), TMPDIR for the work folder.
set -eu

TAG="${TOOLCELL_BASE_TAG:-toolcell-base:bookworm}"
SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

fail() { echo "build-base: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "debootstrap needs root (run as root or with sudo)"
command -v debootstrap >/dev/null 2>&1 || fail "debootstrap is not installed (apt-get install -y debootstrap)"
command -v docker >/dev/null 2>&1 || fail "the docker CLI is not installed (apt-get install -y docker.io)"
docker info >/dev/null 2>&1 || fail "the Docker engine does not answer (start dockerd)"

WORK="$(mktemp -d "${TMPDIR:-/var/tmp}/toolcell-base.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT INT TERM

echo "build-base: debootstrap --variant=minbase $SUITE ($MIRROR) into $WORK/rootfs"
debootstrap --variant=minbase "$SUITE" "$WORK/rootfs" "$MIRROR"

# Smaller and reproducible-ish: no package caches or lists in the base.
rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb "$WORK/rootfs/var/lib/apt/lists/"*

echo "build-base: importing as $TAG"
tar -C "$WORK/rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' \
  - "$TAG"
echo "build-base: done: $TAG"
