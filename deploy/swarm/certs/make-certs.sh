#!/bin/bash
# Makes the TLS material of a toolcell Swarm in DIR (created, mode 700):
# a private CA, one certificate per etcd member (its DNS name on the
# overlay), and client certificates for the toolcell servers. Every link
# between nodes that carries a secret is TLS with these (the overlay network
# is not encrypted: this kernel has no ESP, and elsewhere one may not rely
# on it either). Each file then becomes a Swarm secret (stack.yml), which
# Swarm keeps encrypted in its Raft log and hands only to the tasks that
# name it, on a tmpfs.
#   make-certs.sh DIR [MEMBER…]        (default members: etcd1 etcd2 etcd3)
# With FRONT_SANS (e.g. "DNS:toolcell-front,IP:10.0.0.1"), also front.pem for the front's clients
# (TLS at the front), made again whenever the names it should carry change.
# Keys are EC P-256; certificates last 825 days. Rotation: make new files,
# create secrets under new names, `docker service update --secret-rm/--secret-add`.
set -euo pipefail
dir=${1:?usage: make-certs.sh DIR [MEMBER…]}
shift
members=("$@")
[[ ${#members[@]} -gt 0 ]] || members=(etcd1 etcd2 etcd3)
for m in "${members[@]}"; do [[ $m =~ ^[a-z][a-z0-9-]{0,62}$ ]] || { echo "make-certs: bad member name $m" >&2; exit 2; }; done
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"
days=825
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; chmod 600 "$1"; }

if [[ ! -f ca.pem ]]; then
  key ca-key.pem
  openssl req -x509 -new -key ca-key.pem -sha256 -days "$days" -subj "/CN=toolcell swarm CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.pem
fi

# sign NAME SANS USAGE: NAME.pem and NAME-key.pem, signed by the CA (kept when both are there).
sign() {
  local name=$1 sans=$2 usage=$3
  [[ -f $name.pem && -f $name-key.pem ]] && return 0
  key "$name-key.pem"
  openssl req -new -key "$name-key.pem" -subj "/CN=$name" -out "$name.csr"
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -sha256 -days "$days" -out "$name.pem" \
    -extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=%s\nkeyUsage=critical,digitalSignature,keyEncipherment\n' "$sans" "$usage") 2>/dev/null
  rm -f "$name.csr"
}

for m in "${members[@]}"; do
  # A member is a server (to peers and clients) and a client (to its peers). Clients reaching any
  # member through a node's published port check the name "etcd".
  sign "$m" "DNS:$m,DNS:etcd,DNS:localhost,IP:127.0.0.1" "serverAuth,clientAuth"
done
# The toolcell servers: clients of etcd, and servers to one another (a session forwarded to the tenant's node).
sign toolcell-server "DNS:toolcell-server,DNS:localhost,IP:127.0.0.1" "serverAuth,clientAuth"
if [[ -n ${FRONT_SANS:-} ]]; then
  [[ $FRONT_SANS =~ ^(DNS|IP):[A-Za-z0-9.:*-]+(,(DNS|IP):[A-Za-z0-9.:*-]+)*$ ]] || { echo "make-certs: bad FRONT_SANS" >&2; exit 2; }
  # openssl prints the names as "DNS:a, IP Address:b": compare in that form.
  want=$(sed -e 's/,/, /g' -e 's/IP:/IP Address:/g' <<<"$FRONT_SANS")
  have=$(openssl x509 -in front.pem -noout -ext subjectAltName 2>/dev/null | tail -n +2 | sed 's/^ *//' || true)
  [[ $have == "$want" ]] || rm -f front.pem front-key.pem
  sign front "$FRONT_SANS" "serverAuth"
fi
rm -f ca.srl
echo "made in $dir: ca.pem, ${members[*]/%/.pem}, toolcell-server.pem (and their -key.pem)"
