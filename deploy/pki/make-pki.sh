#!/usr/bin/env bash
# Makes Geodesic's private CA and short-lived leaf certificates (DESIGN §7).
#
# Every leaf carries exactly one SPIFFE-style URI SAN (gRPC exposes the
# `peer_spiffe_id` auth property only then), EKU serverAuth+clientAuth and
# basicConstraints CA:FALSE. Keys are EC P-256, PEM, mode 0600.
#
# If DIR/ca.crt and DIR/ca.key exist the CA is reused, so re-running the script
# with the same --out issues fresh leaves (rotation) under the same CA. Each
# file is replaced by rename, so a process watching the files never reads a
# half-written one. All arguments are validated before anything is written.
#
# Needs only bash and the openssl CLI (1.1.1 or 3.x).

set -euo pipefail
umask 077

readonly PROG="make-pki"
readonly TRUST_DOMAIN="geodesic"
readonly ID_RE='^[a-z0-9][a-z0-9._-]{0,62}$'
readonly ROLES="viewer operator admin"

usage() {
  cat <<'EOF'
Usage: make-pki.sh --out DIR [options]

  --out DIR                 output directory (created if missing, mode 0700)
  --facilities F1,F2,...    issue site-F-agent and site-F-routerd certs
  --replicas R1,R2,...      issue pathcomp-R certs (server certs; get --hosts SANs)
  --operators N:ROLE,...    issue operator-N certs; ROLE is viewer|operator|admin
  --tenants T1,T2,...       issue tenant-T certs: a tenant may only watch its own
                            workloads' paths (the Relay service)
  --etcd M1,M2,...          issue etcd-M certs for etcd members (server and peer;
                            get --hosts SANs); pathcomp-R certs are their clients
  --hosts H1,H2,...         extra DNS/IP SANs for pathcomp and etcd certs
                            (default: localhost,127.0.0.1)
  --days N                  leaf lifetime in days (default 7)
  --ca-days N               lifetime of a newly created CA in days (default 30)
  --ca-only                 only create (or check) the CA
  -h, --help                this text

If DIR/ca.crt and DIR/ca.key exist, the CA is reused and only leaves are
(re)issued. Ids must match ^[a-z0-9][a-z0-9._-]{0,62}$.
EOF
}

die() {
  echo "${PROG}: error: $*" >&2
  exit 1
}

# ---- argument parsing (nothing is written until all of it is validated) ----

out=""
facilities_arg=""
replicas_arg=""
operators_arg=""
etcd_arg=""
tenants_arg=""
hosts_arg="localhost,127.0.0.1"
days="7"
ca_days="30"
ca_only=0

need_value() {
  [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value (see --help)"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) need_value "$@"; out="$2"; shift 2 ;;
    --facilities) need_value "$@"; facilities_arg="$2"; shift 2 ;;
    --replicas) need_value "$@"; replicas_arg="$2"; shift 2 ;;
    --operators) need_value "$@"; operators_arg="$2"; shift 2 ;;
    --etcd) need_value "$@"; etcd_arg="$2"; shift 2 ;;
    --tenants) need_value "$@"; tenants_arg="$2"; shift 2 ;;
    --hosts) need_value "$@"; hosts_arg="$2"; shift 2 ;;
    --days) need_value "$@"; days="$2"; shift 2 ;;
    --ca-days) need_value "$@"; ca_days="$2"; shift 2 ;;
    --ca-only) ca_only=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[[ -n "$out" ]] || die "--out DIR is required (see --help)"
command -v openssl >/dev/null 2>&1 || die "the openssl CLI is not installed"

is_positive_int() {
  [[ "$1" =~ ^[1-9][0-9]{0,4}$ ]]
}
is_positive_int "$days" || die "--days must be a positive integer (at most 99999), got '$days'"
is_positive_int "$ca_days" || die "--ca-days must be a positive integer (at most 99999), got '$ca_days'"
((days <= ca_days)) || die "--days ($days) must not exceed --ca-days ($ca_days)"

# split_list VALUE -> fills the global array `items` (empty elements rejected).
split_list() {
  local flag="$1" value="$2"
  items=()
  [[ -z "$value" ]] && return 0
  [[ "$value" != *,,* && "$value" != ,* && "$value" != *, ]] ||
    die "$flag has an empty element in '$value'"
  IFS=',' read -r -a items <<<"$value"
}

check_id() {
  local what="$1" id="$2"
  [[ "$id" =~ $ID_RE ]] ||
    die "invalid $what id '$id': must match ${ID_RE}"
}

check_unique() {
  local what="$1"
  shift
  local dup
  dup="$(printf '%s\n' "$@" | sort | uniq -d | head -n1)"
  [[ -z "$dup" ]] || die "$what '$dup' is listed twice"
}

split_list --facilities "$facilities_arg"
facilities=("${items[@]+"${items[@]}"}")
for f in "${facilities[@]+"${facilities[@]}"}"; do check_id facility "$f"; done
check_unique facility "${facilities[@]+"${facilities[@]}"}"

split_list --replicas "$replicas_arg"
replicas=("${items[@]+"${items[@]}"}")
for r in "${replicas[@]+"${replicas[@]}"}"; do check_id replica "$r"; done
check_unique replica "${replicas[@]+"${replicas[@]}"}"

split_list --etcd "$etcd_arg"
etcd_members=("${items[@]+"${items[@]}"}")
for m in "${etcd_members[@]+"${etcd_members[@]}"}"; do check_id "etcd member" "$m"; done
check_unique "etcd member" "${etcd_members[@]+"${etcd_members[@]}"}"

split_list --tenants "$tenants_arg"
tenants=("${items[@]+"${items[@]}"}")
for t in "${tenants[@]+"${tenants[@]}"}"; do check_id tenant "$t"; done
check_unique tenant "${tenants[@]+"${tenants[@]}"}"

split_list --operators "$operators_arg"
operator_names=()
operator_roles=()
for entry in "${items[@]+"${items[@]}"}"; do
  [[ "$entry" == *:* ]] || die "operator '$entry' must be NAME:ROLE (ROLE is one of: $ROLES)"
  name="${entry%%:*}"
  role="${entry#*:}"
  check_id operator "$name"
  [[ " $ROLES " == *" $role "* ]] ||
    die "operator '$name' has invalid role '$role' (one of: $ROLES)"
  operator_names+=("$name")
  operator_roles+=("$role")
done
check_unique operator "${operator_names[@]+"${operator_names[@]}"}"

split_list --hosts "$hosts_arg"
host_sans=""
for h in "${items[@]+"${items[@]}"}"; do
  if [[ "$h" =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
    IFS=. read -r o1 o2 o3 o4 <<<"$h"
    ((o1 <= 255 && o2 <= 255 && o3 <= 255 && o4 <= 255)) || die "invalid IPv4 address '$h' in --hosts"
    host_sans+=", IP:$h"
  elif [[ "$h" == *:* ]]; then
    [[ "$h" =~ ^[0-9A-Fa-f:.]+$ ]] || die "invalid IPv6 address '$h' in --hosts"
    host_sans+=", IP:$h"
  elif [[ "$h" =~ ^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$ ]] &&
    ((${#h} <= 253)); then
    host_sans+=", DNS:$h"
  else
    die "invalid host name '$h' in --hosts"
  fi
done

leaf_count=$((${#facilities[@]} * 2 + ${#replicas[@]} + ${#operator_names[@]} + ${#etcd_members[@]} + ${#tenants[@]}))
if ((ca_only)) && ((leaf_count > 0)); then
  die "--ca-only cannot be combined with --facilities, --replicas, --operators, --tenants or --etcd"
fi

# ---- CA: reuse or create ----

ca_crt="$out/ca.crt"
ca_key="$out/ca.key"

if [[ -e "$out" && ! -d "$out" ]]; then
  die "--out '$out' exists and is not a directory"
fi

ca_action=""
if [[ -e "$ca_crt" || -e "$ca_key" ]]; then
  [[ -f "$ca_crt" && -f "$ca_key" ]] ||
    die "found only one of $ca_crt and $ca_key; restore the other or remove both to make a new CA"
  openssl x509 -in "$ca_crt" -noout 2>/dev/null || die "$ca_crt is not a PEM certificate"
  openssl pkey -in "$ca_key" -noout 2>/dev/null || die "$ca_key is not a PEM private key"
  [[ "$(openssl x509 -in "$ca_crt" -noout -pubkey | openssl pkey -pubin -outform DER | openssl dgst -sha256)" == \
    "$(openssl pkey -in "$ca_key" -pubout -outform DER | openssl dgst -sha256)" ]] ||
    die "$ca_key does not match $ca_crt"
  # A leaf must not outlive its issuer: refuse if the CA expires before it.
  openssl x509 -in "$ca_crt" -noout -checkend $((days * 86400)) >/dev/null ||
    die "CA $ca_crt expires within $days days; remove $ca_crt and $ca_key to make a new CA (and redistribute it)"
  ca_action="reused"
fi

mkdir -p "$out"
work="$(mktemp -d "$out/.make-pki.XXXXXX")"
trap 'rm -rf "$work"' EXIT

new_key() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null ||
    die "openssl could not generate a key"
}

# install SRC DEST MODE: atomically replace DEST with SRC.
install_file() {
  chmod "$3" "$1"
  mv -f "$1" "$2"
}

if [[ -z "$ca_action" ]]; then
  new_key "$work/ca.key"
  openssl req -x509 -new -sha256 -key "$work/ca.key" -days "$ca_days" \
    -subj "/O=${TRUST_DOMAIN}/CN=${TRUST_DOMAIN} CA" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" \
    -out "$work/ca.crt" 2>"$work/err" || die "openssl could not create the CA: $(cat "$work/err")"
  install_file "$work/ca.key" "$ca_key" 0600
  install_file "$work/ca.crt" "$ca_crt" 0644
  ca_action="created"
fi

# ---- leaves ----

# issue BASENAME SUBJECT SANS: writes DIR/BASENAME.{key,crt}.
issue() {
  local base="$1" subject="$2" sans="$3"
  local key="$work/$base.key" csr="$work/$base.csr" crt="$work/$base.crt" ext="$work/$base.ext"
  new_key "$key"
  openssl req -new -sha256 -key "$key" -subj "$subject" -out "$csr" 2>"$work/err" ||
    die "openssl could not make a CSR for $base: $(cat "$work/err")"
  cat >"$ext" <<EOF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = ${sans}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
  openssl x509 -req -sha256 -in "$csr" -CA "$ca_crt" -CAkey "$ca_key" \
    -set_serial "0x$(openssl rand -hex 16)" -days "$days" -extfile "$ext" \
    -out "$crt" 2>"$work/err" || die "openssl could not sign $base: $(cat "$work/err")"
  # Key first, then cert: a watcher that catches the gap sees a mismatched
  # pair for one refresh interval at most, never a truncated file.
  install_file "$key" "$out/$base.key" 0600
  install_file "$crt" "$out/$base.crt" 0644
}

spiffe() { echo "URI:spiffe://${TRUST_DOMAIN}/$1"; }

for f in "${facilities[@]+"${facilities[@]}"}"; do
  issue "site-$f-agent" "/O=${TRUST_DOMAIN}/CN=site-$f-agent" "$(spiffe "site/$f/agent")"
  issue "site-$f-routerd" "/O=${TRUST_DOMAIN}/CN=site-$f-routerd" "$(spiffe "site/$f/routerd")"
done
for r in "${replicas[@]+"${replicas[@]}"}"; do
  issue "pathcomp-$r" "/O=${TRUST_DOMAIN}/CN=pathcomp-$r" "$(spiffe "pathcomp/$r")${host_sans}"
done
for m in "${etcd_members[@]+"${etcd_members[@]}"}"; do
  issue "etcd-$m" "/O=${TRUST_DOMAIN}/CN=etcd-$m" "$(spiffe "etcd/$m")${host_sans}"
done
for i in "${!operator_names[@]}"; do
  n="${operator_names[$i]}"
  issue "operator-$n" "/O=${TRUST_DOMAIN}/OU=${operator_roles[$i]}/CN=$n" "$(spiffe "operator/$n")"
done

for t in "${tenants[@]+"${tenants[@]}"}"; do
  issue "tenant-$t" "/O=${TRUST_DOMAIN}/CN=tenant-$t" "$(spiffe "tenant/$t")"
done

ca_end="$(openssl x509 -in "$ca_crt" -noout -enddate | cut -d= -f2)"
if ((leaf_count > 0)); then
  echo "${PROG}: ${out}: CA ${ca_action} (expires ${ca_end}); issued ${leaf_count} leaf cert(s) valid ${days} day(s)"
else
  echo "${PROG}: ${out}: CA ${ca_action} (expires ${ca_end}); no leaf certs requested"
fi
