#!/bin/bash
# Deploys toolcell onto the Swarm this Docker client talks to (a manager):
#   deploy/swarm/deploy.sh [--stack toolcell] [--certs DIR] [--etcd-nodes A,B,C] [--front-port 443] [--server-port 8080]
# DRAFT for issue 26: `toolcell swarm deploy` will do the same. What it does, each step idempotent:
#   1. labels three nodes toolcell-etcd=etcd1..3 (the given ones, else the first three by name)
#      unless some node already carries each label;
#   2. makes the TLS material (certs/make-certs.sh) in DIR when missing there, and creates each
#      file as a Swarm secret when no secret has that name yet;
#   3. renders the front's configuration for the Swarm's nodes (haproxy/render-config.sh) and
#      names it by its content (configs cannot change in place);
#   4. docker stack deploy -c stack.yml.
# Images: the TOOLCELL_*_IMAGE variables, which must name images present on every node.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
stack=toolcell certs=${HOME:-/root}/.toolcell/swarm-certs etcd_nodes="" front_port=443 server_port=8080
while [[ $# -gt 0 ]]; do
  case $1 in
    --stack) stack=$2; shift 2 ;;
    --certs) certs=$2; shift 2 ;;
    --etcd-nodes) etcd_nodes=$2; shift 2 ;;
    --front-port) front_port=$2; shift 2 ;;
    --server-port) server_port=$2; shift 2 ;;
    *) echo "deploy: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $stack =~ ^[a-z][a-z0-9_-]{0,30}$ ]] || { echo "deploy: bad --stack" >&2; exit 2; }
for v in TOOLCELL_LAUNCHER_IMAGE TOOLCELL_SERVER_IMAGE TOOLCELL_ETCD_IMAGE TOOLCELL_HAPROXY_IMAGE; do
  [[ -n ${!v:-} ]] || { echo "deploy: set $v to an image present on every node" >&2; exit 2; }
done
[[ $(docker info --format '{{.Swarm.ControlAvailable}}') == true ]] || { echo "deploy: this Docker engine is not a Swarm manager" >&2; exit 2; }

# 1. etcd placement.
if [[ -z $etcd_nodes ]]; then
  etcd_nodes=$(docker node ls --format '{{.Hostname}}' | sort | head -n 3 | paste -sd, -)
fi
IFS=, read -r -a chosen <<<"$etcd_nodes"
[[ ${#chosen[@]} -eq 3 ]] || { echo "deploy: etcd needs three nodes (--etcd-nodes A,B,C)" >&2; exit 2; }
for i in 1 2 3; do
  label=etcd$i
  if [[ -z $(docker node ls -q --filter "node.label=toolcell-etcd=$label") ]]; then
    docker node update --label-add "toolcell-etcd=$label" "${chosen[$((i - 1))]}" >/dev/null
  fi
done

# 2. TLS secrets.
"$here/certs/make-certs.sh" "$certs" etcd1 etcd2 etcd3 >/dev/null
secret() {
  docker secret inspect "$1" >/dev/null 2>&1 || docker secret create --label dev.toolcell.swarm=1 "$1" "$certs/$2" >/dev/null
}
secret toolcell-ca ca.pem
for i in 1 2 3; do
  secret "etcd$i-cert" "etcd$i.pem"
  secret "etcd$i-key" "etcd$i-key.pem"
done
secret toolcell-server-cert toolcell-server.pem
secret toolcell-server-key toolcell-server-key.pem

# 3. The front's configuration.
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
"$here/haproxy/render-config.sh" --port "$server_port" --front-port 8443 >"$cfg"
export TOOLCELL_HAPROXY_CFG=$cfg
TOOLCELL_HAPROXY_CFG_NAME=haproxy-cfg-$(sha256sum "$cfg" | cut -c1-12)
export TOOLCELL_HAPROXY_CFG_NAME TOOLCELL_FRONT_PORT=$front_port

# 4. The stack.
docker stack deploy --prune -c "$here/stack.yml" "$stack"
