#!/usr/bin/env bash
# Installs the Debian 12 packages Geodesic needs to build, test and run.
# Idempotent: asks apt only for what is missing, and does nothing when all is there.
set -euo pipefail

# `make test-sanitize` needs nothing more: gcc-12 (build-essential) brings the
# ASan, UBSan and TSan runtimes (libasan8, libubsan1, libtsan2). clang and
# libclang-rt-14-dev are for the libFuzzer target (GEODESIC_BUILD_FUZZ).
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev
  libabsl-dev librocksdb-dev libboost-dev libssl-dev openssl libyaml-cpp-dev
  libgtest-dev libgmock-dev libexpat1-dev coinor-libclp-dev
  frr gobgpd bird2 clang libclang-rt-14-dev etcd-server etcd-client
  dpkg-dev systemd python3 python3-yaml strace python3-grpcio python3-grpc-tools
  prometheus-cpp-dev prometheus chromium nftables
)
# `make package` runs dpkg-shlibdeps (dpkg-dev); the unit tests run systemd-analyze
# (systemd) and trace the daemons' system calls against the units' filter (strace);
# the relay example (examples/relay_watch.py) runs on Debian's python3-grpcio, with
# stubs its test generates with python3-grpc-tools;
# the Kubernetes test renders with `kubectl kustomize` and reads YAML with
# python3-yaml; the metrics tests check the scrape and the rules with promtool
# (prometheus), the console test drives headless chromium; the netns backbone
# drops a share of a link's packets with nftables (`nft`, numgen random), as not
# every kernel has netem. bench_bgp runs BIRD 2 (bird2) as a reference BGP
# sender, as its own process in a scratch directory: the system bird service
# that the package enables and starts is stopped and disabled below. Debian's
# kubectl is in kubernetes-client; a kubectl already on the PATH (another vendor's package) is kept, as the two would collide.
if ! command -v kubectl >/dev/null; then
  PACKAGES+=(kubernetes-client)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

# Packages whose postinst starts a system daemon that nothing here wants (the
# benchmarks start their own, with their own config): stop it and keep it off
# across reboots. Only for packages this run installed, so an administrator's
# own bird keeps running.
stop_system_service() {
  local service=$1
  if [[ -d /run/systemd/system ]]; then
    $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
  elif [[ -x /etc/init.d/$service ]]; then
    $SUDO /etc/init.d/"$service" stop >/dev/null 2>&1 || true
    $SUDO update-rc.d "$service" disable >/dev/null 2>&1 || true
  fi
}
for pkg in "${missing[@]}"; do
  case "$pkg" in
    bird2) stop_system_service bird ;;
  esac
done
