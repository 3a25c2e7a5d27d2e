#!/usr/bin/env bash
# The systemd units as installed (cmake --install into a temporary prefix, so
# ExecStart names programs that exist): `systemd-analyze verify` must print
# nothing at all on stderr (it exits 0 on unknown keys), and
# `systemd-analyze security --offline=true` must rate each unit's exposure
# below THRESHOLD (README: 2.0; systemd 252 rated each unit 1.1).
#   systemd_units_test.sh BUILD_DIR THRESHOLD
set -euo pipefail
build_dir=$1
threshold=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/geodesic-units-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing (Debian package systemd)"

cmake --install "$build_dir" --prefix "$tmp/usr" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "cmake --install"; }
units="$tmp/usr/lib/systemd/system"
grep -q "^ExecStart=$tmp/usr/sbin/pathcomp " "$units/geodesic-pathcomp.service" || fail "ExecStart does not name the installed pathcomp"

# Instances of the templates, found through the unit path (a template given
# as a file path is silently not loaded).
for unit in geodesic-pathcomp.service geodesic-site-agent@iad.service geodesic-routerd@iad.service; do
  SYSTEMD_UNIT_PATH="$units:" systemd-analyze verify --man=no "$unit" >"$tmp/verify.out" 2>"$tmp/verify.err" ||
    { cat "$tmp/verify.out" "$tmp/verify.err" >&2; fail "systemd-analyze verify $unit exited non-zero"; }
  if [[ -s "$tmp/verify.err" ]]; then
    cat "$tmp/verify.err" >&2
    fail "systemd-analyze verify $unit printed warnings"
  fi
  SYSTEMD_UNIT_PATH="$units:" systemd-analyze security --offline=true "$unit" >"$tmp/security.out" 2>&1 || true
  score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$tmp/security.out")
  [[ -n $score ]] || { cat "$tmp/security.out" >&2; fail "no exposure level for $unit"; }
  echo "$unit: verify clean, exposure $score (threshold $threshold)"
  awk -v s="$score" -v t="$threshold" 'BEGIN { exit !(s < t) }' ||
    { grep '✗' "$tmp/security.out" >&2; fail "$unit exposure $score is not below $threshold"; }
done
echo "PASS"
