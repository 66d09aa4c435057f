#!/bin/bash
# Builds the images toolcell's Swarm stack runs, on this machine's Docker engine:
#   deploy/swarm/build-images.sh [--base IMAGE] [--tag TAG] [--node PATH] [--load-on HOST]…
#
#   toolcell-swarm-launcher:TAG  launcher/   the task on every node that runs the node's server
#   toolcell-swarm-etcd:TAG      etcd/       Debian's etcd-server, three members
#   toolcell-swarm-haproxy:TAG   haproxy/    Debian's HAProxy, the front
#   toolcell-swarm-server:TAG    server/     toolcell itself: this machine's Node binary (>= 20.19;
#                                            --node PATH for another) and this checkout's package
#                                            (package.json, dist/, sandbox/, production node_modules),
#                                            which must have been built first (npx tsc -p tsconfig.json)
# and the sandbox image (toolcell-sandbox:<recipe hash>, `toolcell sandbox build`) when missing: every
# node's server runs its tools in it. TAG defaults to package.json's version, which deploy.sh uses
# when no TOOLCELL_*_IMAGE variable says otherwise. The base of the Debian images is --base, else the
# offline base toolcell-base:bookworm when this engine has it, else debian:bookworm-slim (pulled).
# Safe to run again: the same tags are rebuilt from Docker's cache. Progress on stderr; stdout gets
# the four TOOLCELL_*_IMAGE=… lines (for deploy.sh, which defaults to the same names).
#
# Every image must be on every node of the Swarm before deploy.sh. Either:
#   --load-on HOST (repeatable): docker save of the five images, piped to `ssh HOST docker load`
#     (HOST as ssh takes it: user@address or a name from ~/.ssh/config; its user may run docker);
#   or by hand: docker save IMAGES… | ssh HOST docker load, or docker save -o FILE and docker load -i FILE;
#   or a registry the nodes pull from: docker tag IMAGE REGISTRY/IMAGE, docker push, and set the
#     TOOLCELL_*_IMAGE variables to those names for deploy.sh (and the sandbox image pulled on each node).
# Without a registry, DOCKER_SERVICE_PREFER_OFFLINE_IMAGE=1 in each dockerd's environment spares
# every task start a pull attempt.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
root=$(readlink -f "$here/../..")
say() { echo "build-images: $*" >&2; }
fail() { say "$*"; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

version=$(sed -n 's/^  "version": *"\([^"]*\)".*/\1/p' "$root/package.json" | head -n 1)
base="" tag=$version node_bin="" load_on=()
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --base | --tag | --node | --load-on) [[ $# -ge 2 && -n $2 ]] || fail "$1 needs a value"; ;;&
    --base) base=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --node) node_bin=$2; shift 2 ;;
    --load-on) load_on+=("$2"); shift 2 ;;
    *) fail "unknown argument $1 (see --help)" ;;
  esac
done
# Docker's tag grammar: 128 characters at most, not starting with . or -.
[[ $tag =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || fail "bad --tag '$tag' (letters, digits, _ . -; 128 at most)"
[[ -z $base || $base =~ ^[a-z0-9][a-z0-9._/:@-]*$ ]] || fail "bad --base '$base'"
for host in "${load_on[@]}"; do
  [[ $host =~ ^[A-Za-z0-9_][A-Za-z0-9_.@:-]*$ ]] || fail "bad --load-on '$host'"
done

# What the server image needs from this machine, checked before any build.
if [[ -z $node_bin ]]; then
  node_bin=$(command -v node) || fail "no node on PATH: the server image takes this machine's Node binary (>= 20.19), or give --node PATH"
fi
resolved=$(readlink -f "$node_bin") && [[ -f $resolved && -x $resolved ]] || fail "$node_bin is not an executable file"
node_bin=$resolved
[[ $(head -c 4 "$node_bin" | od -An -c | tr -d ' ') == 177ELF ]] || fail "$node_bin is not a Node binary (an ELF file; a version manager's shim is not: give --node the real one)"
node_version=$("$node_bin" -p 'process.versions.node' 2>/dev/null) || true
[[ $node_version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "$node_bin is not a Node binary (it did not print its version)"
IFS=. read -r major minor _ <<<"$node_version"
((major > 20 || (major == 20 && minor >= 19))) || fail "Node $node_version at $node_bin: toolcell needs >= 20.19 (give --node PATH)"
for part in dist/src/cli/bin.js dist/workers sandbox/Dockerfile; do
  [[ -e $root/$part ]] || fail "$root/$part is missing: build the package first (npm ci && npx tsc -p tsconfig.json in $root)"
done
command -v docker >/dev/null || fail "no docker client on PATH"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || fail "the Docker engine does not answer (is dockerd running, may this user use it? DOCKER_HOST=${DOCKER_HOST:-unset})"

if [[ -z $base ]]; then
  if docker image inspect toolcell-base:bookworm >/dev/null 2>&1; then
    base=toolcell-base:bookworm
    say "base: toolcell-base:bookworm (the offline base on this engine)"
  else
    base=debian:bookworm-slim
    say "base: debian:bookworm-slim (no toolcell-base:bookworm on this engine; pulled when missing)"
  fi
else
  say "base: $base (--base)"
fi

build() { # NAME CONTEXT
  say "building toolcell-swarm-$1:$tag"
  docker build -q --build-arg "BASE=$base" --label "dev.toolcell.version=$version" -t "toolcell-swarm-$1:$tag" "$2" >/dev/null ||
    fail "docker build of toolcell-swarm-$1:$tag failed (its output is above)"
}
for name in launcher etcd haproxy; do build "$name" "$here/$name"; done

# The server's context, staged as test/helpers/cluster/server-image.ts does: the Node binary and the
# package, with only the production dependencies (each folder `npm ls --omit=dev` lists, copied).
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/toolcell/dist"
cp "$here/server/Dockerfile" "$context/Dockerfile"
cp "$node_bin" "$context/node"
cp -a "$root/package.json" "$context/toolcell/"
[[ ! -f $root/package-lock.json ]] || cp -a "$root/package-lock.json" "$context/toolcell/"
cp -a "$root/dist/src" "$root/dist/workers" "$context/toolcell/dist/"
cp -a "$root/sandbox" "$context/toolcell/"
modules=$(cd "$root" && npm ls --omit=dev --all --parseable 2>/dev/null | grep "^$root/node_modules/" | sort -u) || true
[[ -n $modules ]] || fail "npm ls --omit=dev found no production dependencies in $root/node_modules: run npm ci there first"
last=""
while read -r folder; do
  [[ -n $last && $folder == "$last"/* ]] && continue
  last=$folder
  mkdir -p "$context/toolcell/$(dirname "${folder#"$root/"}")"
  cp -a "$folder" "$context/toolcell/${folder#"$root/"}"
done <<<"$modules"
build server "$context"

# The sandbox image, which every node's server runs tools in, by the package's own command.
sandbox=$("$node_bin" --input-type=module -e "import { sandboxImageTag } from '$root/dist/src/backends/docker/image.js'; console.log(sandboxImageTag());")
if docker image inspect "$sandbox" >/dev/null 2>&1; then
  say "sandbox image $sandbox: present"
else
  say "building the sandbox image $sandbox (toolcell sandbox build --base $base)"
  "$node_bin" "$root/dist/src/cli/bin.js" sandbox build --base "$base" >/dev/null || fail "toolcell sandbox build failed"
fi

images=(toolcell-swarm-launcher:$tag toolcell-swarm-etcd:$tag toolcell-swarm-haproxy:$tag toolcell-swarm-server:$tag "$sandbox")
for host in "${load_on[@]}"; do
  say "loading the images on $host (docker save | ssh $host docker load)"
  docker save "${images[@]}" | ssh -o BatchMode=yes "$host" docker load -q >&2 || fail "loading the images on $host failed"
done

echo "TOOLCELL_LAUNCHER_IMAGE=toolcell-swarm-launcher:$tag"
echo "TOOLCELL_ETCD_IMAGE=toolcell-swarm-etcd:$tag"
echo "TOOLCELL_HAPROXY_IMAGE=toolcell-swarm-haproxy:$tag"
echo "TOOLCELL_SERVER_IMAGE=toolcell-swarm-server:$tag"
