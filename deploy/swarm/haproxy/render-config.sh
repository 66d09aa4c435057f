#!/bin/bash
# Renders haproxy.cfg.tmpl for the Swarm's nodes, on stdout.
#   render-config.sh [--port 8080] [--front-port 8443] [--ready-path /readyz] [--live-path /healthz] [NAME=ADDRESS…]
# Without NAME=ADDRESS arguments, asks the Swarm (run it on a manager): every
# node's hostname and address. Node names are what the toolcell servers put
# in front of their session ids (TOOLCELL_NODE = the node's hostname).
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
port=8080 front=8443 ready=/readyz live=/healthz
nodes=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --port) port=$2; shift 2 ;;
    --front-port) front=$2; shift 2 ;;
    --ready-path) ready=$2; shift 2 ;;
    --live-path) live=$2; shift 2 ;;
    *=*) nodes+=("$1"); shift ;;
    *) echo "render-config: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $port =~ ^[0-9]{1,5}$ && $front =~ ^[0-9]{1,5}$ && $ready =~ ^/[A-Za-z0-9/_.-]*$ && $live =~ ^/[A-Za-z0-9/_.-]*$ ]] || { echo "render-config: bad port or path" >&2; exit 2; }
if [[ ${#nodes[@]} -eq 0 ]]; then
  mapfile -t nodes < <(docker node inspect $(docker node ls -q) --format '{{.Description.Hostname}}={{.Status.Addr}}')
fi
for node in "${nodes[@]}"; do
  [[ $node =~ ^[A-Za-z0-9][A-Za-z0-9-]{0,62}=[0-9a-fA-F.:]+$ ]] || { echo "render-config: bad node $node (NAME=ADDRESS)" >&2; exit 2; }
done
block=() in_block=0
while IFS= read -r line; do
  if [[ $line == @nodes ]]; then in_block=1; block=(); continue; fi
  if [[ $line == @end ]]; then
    for node in "${nodes[@]}"; do
      for b in "${block[@]}"; do
        b=${b//@NAME@/${node%%=*}}
        printf '%s\n' "${b//@ADDRESS@/${node#*=}}"
      done
    done
    in_block=0
    continue
  fi
  if [[ $in_block == 1 ]]; then block+=("$line"); continue; fi
  printf '%s\n' "$line"
done < <(sed -e "s#@PORT@#$port#g" -e "s#@FRONT_PORT@#$front#g" -e "s#@READY_PATH@#$ready#g" -e "s#@LIVE_PATH@#$live#g" "$here/haproxy.cfg.tmpl")
