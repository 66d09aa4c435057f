#!/bin/bash
# Deploys toolcell onto the Swarm this Docker client talks to (a manager):
#   deploy/swarm/deploy.sh [--stack toolcell] [--certs DIR] [--etcd-nodes A,B,C] [--front-port 443] [--server-port 8080]
#                          [--front-cert FILE --front-key FILE] [--front-name NAME]…
# DRAFT for issue 26: `toolcell swarm deploy` will do the same. What it does, each step idempotent:
#   1. labels three nodes toolcell-etcd=etcd1..3 (the given ones, else the first three by name)
#      unless some node already carries each label;
#   2. makes the TLS material (certs/make-certs.sh) in DIR when missing there, and creates each
#      file as a Swarm secret when no secret has that name yet;
#   3. renders the front's configuration for the Swarm's nodes (haproxy/render-config.sh) and
#      names it by its content (configs cannot change in place);
#   4. the front's certificate for clients (TLS at the front: their bearer keys cross the network):
#      --front-cert/--front-key, the operator's (PEM; the chain in the certificate file), or else
#      one made from the cluster's CA (certs/make-certs.sh) naming every node's address and each
#      --front-name, said on stderr (clients then need DIR/ca.pem); a Swarm secret named by its
#      content, so a new certificate rolls the fronts one node at a time;
#   5. docker stack deploy -c stack.yml.
# Images: the TOOLCELL_*_IMAGE variables, which must name images present on every node.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
stack=toolcell certs=${HOME:-/root}/.toolcell/swarm-certs etcd_nodes="" front_port=443 server_port=8080
front_cert="" front_key="" front_names=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --stack) stack=$2; shift 2 ;;
    --certs) certs=$2; shift 2 ;;
    --etcd-nodes) etcd_nodes=$2; shift 2 ;;
    --front-port) front_port=$2; shift 2 ;;
    --server-port) server_port=$2; shift 2 ;;
    --front-cert) front_cert=$2; shift 2 ;;
    --front-key) front_key=$2; shift 2 ;;
    --front-name) front_names+=("$2"); shift 2 ;;
    *) echo "deploy: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $stack =~ ^[a-z][a-z0-9_-]{0,30}$ ]] || { echo "deploy: bad --stack" >&2; exit 2; }
[[ -z $front_cert && -z $front_key ]] || [[ -n $front_cert && -n $front_key ]] || { echo "deploy: --front-cert and --front-key go together" >&2; exit 2; }
if [[ -n $front_cert ]]; then
  [[ ${#front_names[@]} -eq 0 ]] || { echo "deploy: --front-name is for a certificate deploy.sh makes, not with --front-cert" >&2; exit 2; }
  # Checked before anything changes: both PEM, and the key is the certificate's.
  cert_pub=$(openssl x509 -in "$front_cert" -noout -pubkey 2>/dev/null) || { echo "deploy: --front-cert $front_cert is not a PEM certificate" >&2; exit 2; }
  key_pub=$(openssl pkey -in "$front_key" -pubout 2>/dev/null) || { echo "deploy: --front-key $front_key is not a PEM private key" >&2; exit 2; }
  [[ $cert_pub == "$key_pub" ]] || { echo "deploy: --front-key is not the key of --front-cert" >&2; exit 2; }
  openssl x509 -in "$front_cert" -noout -checkend 0 >/dev/null || { echo "deploy: --front-cert $front_cert has expired" >&2; exit 2; }
fi
for name in "${front_names[@]}"; do
  [[ $name =~ ^[A-Za-z0-9*]([A-Za-z0-9.-]{0,252})$ ]] || { echo "deploy: bad --front-name $name" >&2; exit 2; }
done
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
pem=$(mktemp)
trap 'rm -f "$cfg" "$pem"' EXIT
"$here/haproxy/render-config.sh" --port "$server_port" --front-port 8443 >"$cfg"
export TOOLCELL_HAPROXY_CFG=$cfg
TOOLCELL_HAPROXY_CFG_NAME=haproxy-cfg-$(sha256sum "$cfg" | cut -c1-12)
export TOOLCELL_HAPROXY_CFG_NAME TOOLCELL_FRONT_PORT=$front_port TOOLCELL_SERVER_PORT=$server_port

# 4. The front's certificate for clients.
if [[ -z $front_cert ]]; then
  sans="DNS:toolcell-front"
  for name in "${front_names[@]}"; do sans+=",DNS:$name"; done
  while read -r addr; do sans+=",IP:$addr"; done < <(docker node inspect $(docker node ls -q) --format '{{.Status.Addr}}' | sort -u)
  FRONT_SANS=$sans "$here/certs/make-certs.sh" "$certs" etcd1 etcd2 etcd3 >/dev/null
  front_cert=$certs/front.pem front_key=$certs/front-key.pem
  echo "deploy: no --front-cert: the front serves $front_cert, made from the cluster's CA for $sans; clients check it with $certs/ca.pem" >&2
fi
(umask 077 && cat "$front_cert" "$front_key" >"$pem")
export TOOLCELL_FRONT_PEM=$pem
TOOLCELL_FRONT_PEM_NAME=$stack-front-$(sha256sum "$pem" | cut -c1-12)
export TOOLCELL_FRONT_PEM_NAME

# 5. The stack.
docker stack deploy --prune -c "$here/stack.yml" "$stack"
