#!/bin/sh
# One etcd member of toolcell's shared state (stack.yml: services etcd1..3).
#   ETCD_MEMBER   this member's name, also its DNS name on the overlay (dnsrr)
#   ETCD_MEMBERS  every member's name, comma-separated (the initial cluster)
# Peers and clients speak TLS with client certificates (the overlay is not
# encrypted here: no ESP). The files are Swarm secrets:
#   /run/secrets/etcd-ca.pem, /run/secrets/etcd-cert.pem, /run/secrets/etcd-key.pem
# The data folder is the member's node-local volume; once it holds a member,
# etcd ignores the initial-cluster flags and rejoins with what it has.
set -eu
: "${ETCD_MEMBER:?ETCD_MEMBER must name this member}" "${ETCD_MEMBERS:?ETCD_MEMBERS must list the members}"
s=/run/secrets
for f in etcd-ca.pem etcd-cert.pem etcd-key.pem; do
  [ -r "$s/$f" ] || { echo "etcd-member: missing secret $s/$f" >&2; exit 2; }
done
cluster=$(echo "$ETCD_MEMBERS" | tr ',' '\n' | sed 's#.*#&=https://&:2380#' | paste -sd, -)
# etcd reads its other settings (ETCD_* variables) itself; these unset ones
# are ours, not its: it would warn about unknown ETCD_ variables.
member=$ETCD_MEMBER
unset ETCD_MEMBER ETCD_MEMBERS
exec etcd \
  --name "$member" \
  --data-dir /var/lib/etcd/data \
  --listen-peer-urls https://0.0.0.0:2380 \
  --listen-client-urls https://0.0.0.0:2379 \
  --initial-advertise-peer-urls "https://$member:2380" \
  --advertise-client-urls "https://$member:2379" \
  --initial-cluster "$cluster" \
  --initial-cluster-state new \
  --initial-cluster-token toolcell \
  --client-cert-auth --trusted-ca-file "$s/etcd-ca.pem" --cert-file "$s/etcd-cert.pem" --key-file "$s/etcd-key.pem" \
  --peer-client-cert-auth --peer-trusted-ca-file "$s/etcd-ca.pem" --peer-cert-file "$s/etcd-cert.pem" --peer-key-file "$s/etcd-key.pem"
