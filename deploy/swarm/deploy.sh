#!/bin/bash
# Deploys toolcell onto the Swarm this Docker client talks to (a manager):
#   deploy/swarm/deploy.sh [--stack toolcell] [--certs DIR] [--etcd-nodes A,B,C] [--front-port 443] [--server-port 8080]
#                          [--front-cert FILE --front-key FILE] [--front-name NAME]… [--tag TAG]
#                          [--server-arg ARG]… [--etcd-addresses A,B,C] [--print-server-cmd]
# What it does, each step idempotent:
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
# Images: TOOLCELL_LAUNCHER_IMAGE, TOOLCELL_SERVER_IMAGE, TOOLCELL_ETCD_IMAGE, TOOLCELL_HAPROXY_IMAGE,
# each by default toolcell-swarm-<launcher|server|etcd|haproxy>:TAG (TAG: --tag, else package.json's
# version), what build-images.sh makes; every image must be on every node (build-images.sh --load-on,
# or a registry).
# The server's command: TOOLCELL_SERVER_CMD (a JSON array; "[]" is the image's own), by default
#   serve --http 0.0.0.0:<server-port> --tenants /var/lib/toolcell/tenants.json
#         --data-dir /var/lib/toolcell/hosting --audit /var/lib/toolcell/audit.log
#         --tls-cert/--tls-key /run/secrets/toolcell-server(-key).pem
#         --etcd https://<etcd1's node>:2379,… (the labelled nodes' Swarm addresses, or --etcd-addresses)
#         --etcd-ca/--etcd-cert/--etcd-key /run/secrets/… --etcd-server-name etcd
#         --node-url https://@NODE_ADDRESS@:<server-port>   (the launcher puts each node's address there)
# with each --server-arg appended (to a given TOOLCELL_SERVER_CMD too), e.g. --server-arg --metrics
# --server-arg 0.0.0.0:9464. With the default command, TOOLCELL_AUDIT_FILE defaults to its --audit.
# --print-server-cmd prints the server's command (JSON) and exits, changing nothing (with
# --etcd-addresses it does not even ask the Swarm).
set -euo pipefail
shopt -s inherit_errexit # a failure inside $(…) stops the script too
here=$(dirname "$(readlink -f "$0")")
stack=toolcell certs=${HOME:-/root}/.toolcell/swarm-certs etcd_nodes="" front_port=443 server_port=8080
front_cert="" front_key="" front_names=()
tag="" server_args=() etcd_addresses="" print_server_cmd=false
fail() { echo "deploy: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --stack | --certs | --etcd-nodes | --front-port | --server-port | --front-cert | --front-key | --front-name | --tag | --server-arg | --etcd-addresses)
      [[ $# -ge 2 ]] || fail "$1 needs a value" ;;&
    --stack) stack=$2; shift 2 ;;
    --certs) certs=$2; shift 2 ;;
    --etcd-nodes) etcd_nodes=$2; shift 2 ;;
    --front-port) front_port=$2; shift 2 ;;
    --server-port) server_port=$2; shift 2 ;;
    --front-cert) front_cert=$2; shift 2 ;;
    --front-key) front_key=$2; shift 2 ;;
    --front-name) front_names+=("$2"); shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --server-arg) server_args+=("$2"); shift 2 ;;
    --etcd-addresses) etcd_addresses=$2; shift 2 ;;
    --print-server-cmd) print_server_cmd=true; shift ;;
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
[[ $front_port =~ ^[0-9]{1,5}$ && $front_port -ge 1 && $front_port -le 65535 ]] || fail "bad --front-port $front_port"
[[ $server_port =~ ^[0-9]{1,5}$ && $server_port -ge 1 && $server_port -le 65535 ]] || fail "bad --server-port $server_port"

# Images: what build-images.sh makes, unless the TOOLCELL_*_IMAGE variables say otherwise.
if [[ -z $tag ]]; then
  tag=$(sed -n 's/^  "version": *"\([^"]*\)".*/\1/p' "$here/../../package.json" 2>/dev/null | head -n 1)
  [[ -n $tag ]] || fail "no package.json beside deploy/swarm to take the images' tag from: give --tag TAG or the TOOLCELL_*_IMAGE variables"
fi
[[ $tag =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || fail "bad --tag '$tag'"
for name in launcher server etcd haproxy; do
  v=TOOLCELL_${name^^}_IMAGE
  [[ -n ${!v:-} ]] || export "$v=toolcell-swarm-$name:$tag"
done

# The server's command: TOOLCELL_SERVER_CMD when set (it wins), else the standard one; --server-arg appended.
for arg in "${server_args[@]}"; do
  [[ $arg != *[$'\x01'-$'\x08'$'\x0b'-$'\x1f'$'\x7f']* ]] || fail "control character in --server-arg"
done
json_string() { # one JSON string of $1 (--server-arg has no control characters but tab and newline)
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/\\t}
  s=${s//$'\n'/\\n}
  printf '"%s"' "$s"
}
json_array() { # a JSON array of the arguments
  local out="" arg
  for arg in "$@"; do out+=${out:+,}$(json_string "$arg"); done
  printf '[%s]' "$out"
}
if [[ -n $etcd_addresses ]]; then
  IFS=, read -r -a given_addresses <<<"$etcd_addresses"
  [[ ${#given_addresses[@]} -eq 3 ]] || fail "--etcd-addresses needs three addresses (A,B,C)"
  for addr in "${given_addresses[@]}"; do
    [[ $addr =~ ^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$ || $addr =~ ^\[[0-9A-Fa-f:]+\]$ ]] || fail "bad --etcd-addresses entry '$addr' (a host name or IP address)"
  done
fi
default_server_cmd=false
[[ -n ${TOOLCELL_SERVER_CMD+set} ]] || default_server_cmd=true
if ! $default_server_cmd && [[ ${#server_args[@]} -gt 0 ]]; then
  # Appended inside the given array's closing bracket; the launcher checks the result is an array of strings.
  given=$(printf '%s' "$TOOLCELL_SERVER_CMD" | tr -d '\n')
  [[ $given =~ ^[[:space:]]*\[(.*)\][[:space:]]*$ ]] || fail "TOOLCELL_SERVER_CMD is not a JSON array"
  inner=${BASH_REMATCH[1]}
  extra=$(json_array "${server_args[@]}")
  extra=${extra:1:-1}
  if [[ $inner =~ ^[[:space:]]*$ ]]; then TOOLCELL_SERVER_CMD="[$extra]"; else TOOLCELL_SERVER_CMD="[$inner,$extra]"; fi
  export TOOLCELL_SERVER_CMD
fi
# The etcd members' addresses the servers dial: the labelled nodes' Swarm addresses (etcd publishes 2379 in host mode there).
node_address() {
  local addr
  addr=$(docker node inspect --format '{{.Status.Addr}}' "$1") || fail "no Swarm node $1"
  if [[ -z $addr || $addr == 0.0.0.0 ]]; then # some engines say 0.0.0.0 for the leader: its manager address then
    addr=$(docker node inspect --format '{{with .ManagerStatus}}{{.Addr}}{{end}}' "$1")
    addr=${addr%:*}
  fi
  [[ -n $addr ]] || fail "no address for Swarm node $1"
  printf '%s' "$addr"
}
standard_server_cmd() { # the etcd nodes' addresses as arguments
  local s=/run/secrets etcd="" addr
  for addr in "$@"; do etcd+=${etcd:+,}https://$addr:2379; done
  json_array serve --http "0.0.0.0:$server_port" --tenants /var/lib/toolcell/tenants.json \
    --data-dir /var/lib/toolcell/hosting --audit /var/lib/toolcell/audit.log \
    --tls-cert "$s/toolcell-server.pem" --tls-key "$s/toolcell-server-key.pem" \
    --etcd "$etcd" --etcd-ca "$s/toolcell-ca.pem" --etcd-cert "$s/toolcell-server.pem" --etcd-key "$s/toolcell-server-key.pem" \
    --etcd-server-name etcd --node-url "https://@NODE_ADDRESS@:$server_port" "${server_args[@]}"
}
if $print_server_cmd && { ! $default_server_cmd || [[ -n $etcd_addresses ]]; }; then
  if $default_server_cmd; then standard_server_cmd "${given_addresses[@]}"; else printf '%s' "$TOOLCELL_SERVER_CMD"; fi
  echo
  exit 0
fi

[[ $(docker info --format '{{.Swarm.ControlAvailable}}' 2>/dev/null) == true ]] || fail "this Docker engine is not a Swarm manager (or does not answer): run deploy.sh on a manager, or set DOCKER_HOST to one"

# 1. etcd placement.
if [[ -z $etcd_nodes ]]; then
  etcd_nodes=$(docker node ls --format '{{.Hostname}}' | sort | head -n 3 | paste -sd, -)
fi
IFS=, read -r -a chosen <<<"$etcd_nodes"
[[ ${#chosen[@]} -eq 3 ]] || { echo "deploy: etcd needs three nodes (--etcd-nodes A,B,C)" >&2; exit 2; }
if $print_server_cmd; then # the nodes step 1 would label, without labelling them
  addresses=()
  for i in 1 2 3; do
    labelled=$(docker node ls -q --filter "node.label=toolcell-etcd=etcd$i" | head -n 1)
    addr=$(node_address "${labelled:-${chosen[$((i - 1))]}}")
    addresses+=("$addr")
  done
  standard_server_cmd "${addresses[@]}"
  echo
  exit 0
fi
for i in 1 2 3; do
  label=etcd$i
  if [[ -z $(docker node ls -q --filter "node.label=toolcell-etcd=$label") ]]; then
    docker node update --label-add "toolcell-etcd=$label" "${chosen[$((i - 1))]}" >/dev/null
  fi
done
if $default_server_cmd; then
  if [[ -n $etcd_addresses ]]; then
    addresses=("${given_addresses[@]}")
  else
    addresses=()
    for i in 1 2 3; do
      labelled=$(docker node ls -q --filter "node.label=toolcell-etcd=etcd$i" | head -n 1)
      addr=$(node_address "$labelled")
      addresses+=("$addr")
    done
  fi
  TOOLCELL_SERVER_CMD=$(standard_server_cmd "${addresses[@]}")
  export TOOLCELL_SERVER_CMD TOOLCELL_AUDIT_FILE=${TOOLCELL_AUDIT_FILE-/var/lib/toolcell/audit.log}
fi

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
