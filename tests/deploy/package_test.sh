#!/usr/bin/env bash
# The Debian package (make package) installs into a fresh root and its
# programs run from there: --version for every program, --check-config on the
# installed example configs (must pass) and on broken copies (must fail,
# naming the file and the key). The Depends line is dpkg-shlibdeps' (computed).
#   package_test.sh BUILD_DIR
# Builds the package with cpack into a temporary directory; everything it
# makes is removed on exit, failed or not.
set -euo pipefail
build_dir=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/geodesic-package-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! cpack --config "$build_dir/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1; then
  cat "$tmp/cpack.log" >&2
  fail "cpack could not build the package"
fi
debs=("$tmp"/out/geodesic_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "expected one geodesic_*.deb, got: ${debs[*]}"
deb=${debs[0]}
echo "package: $(basename "$deb")"

depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
for library in libgrpc++ libprotobuf libyaml-cpp libssl3 libstdc++6; do
  [[ $depends == *"$library"* ]] || fail "Depends lacks $library (dpkg-shlibdeps should have found it)"
done

root="$tmp/root"
dpkg -x "$deb" "$root"
for file in usr/sbin/pathcomp usr/sbin/site_agent usr/sbin/routerd usr/bin/tectl usr/bin/fabric-plan \
            usr/bin/geodesic-make-pki; do
  [[ -x "$root/$file" ]] || fail "$file is not installed (or not executable)"
done
for file in usr/lib/systemd/system/geodesic-pathcomp.service usr/lib/systemd/system/geodesic-site-agent@.service \
            usr/lib/systemd/system/geodesic-routerd@.service usr/lib/sysusers.d/geodesic.conf \
            usr/share/doc/geodesic/examples/backbone.yaml; do
  [[ -f "$root/$file" ]] || fail "$file is not installed"
done
grep -q '^ExecStart=/usr/sbin/pathcomp --config /etc/geodesic/pathcomp.yaml$' \
  "$root/usr/lib/systemd/system/geodesic-pathcomp.service" || fail "the pathcomp unit does not run /usr/sbin/pathcomp"

# The postinst creates the units' user from the package's sysusers.d entry:
# do the same into a copy of this machine's user database.
if command -v systemd-sysusers >/dev/null; then
  mkdir -p "$tmp/users/etc" "$tmp/users/usr/lib/sysusers.d"
  cp /etc/passwd /etc/group "$tmp/users/etc/"
  cp "$root/usr/lib/sysusers.d/geodesic.conf" "$tmp/users/usr/lib/sysusers.d/"
  systemd-sysusers --root="$tmp/users" geodesic.conf >/dev/null 2>&1 || fail "systemd-sysusers refused geodesic.conf"
  grep -q '^geodesic:x:[0-9]*:[0-9]*:.*:/var/lib/geodesic:/usr/sbin/nologin$' "$tmp/users/etc/passwd" ||
    fail "geodesic.conf did not make a system user geodesic"
  echo "sysusers.d: makes the geodesic system user"
fi
dpkg-deb --control "$deb" "$tmp/control"
sh -n "$tmp/control/postinst" || fail "the postinst is not valid sh"
grep -q 'systemd-sysusers geodesic.conf' "$tmp/control/postinst" || fail "the postinst does not create the user"

for program in usr/sbin/pathcomp usr/sbin/site_agent usr/sbin/routerd usr/bin/tectl usr/bin/fabric-plan; do
  name=$(basename "$program")
  version=$("$root/$program" --version) || fail "$name --version exited non-zero"
  [[ $version =~ ^$name\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "$name --version printed \"$version\""
  echo "$version"
done
"$root/usr/bin/geodesic-make-pki" --help >/dev/null || fail "geodesic-make-pki --help failed"

examples="$root/usr/share/doc/geodesic/examples"
check() {  # check DAEMON CONFIG: runs --check-config, output in $tmp/check.out; returns its exit code
  local code=0
  "$root/usr/sbin/$1" --check-config "$2" >"$tmp/check.out" 2>&1 || code=$?
  return "$code"
}
for pair in pathcomp:pathcomp.yaml site_agent:site-agent-iad.yaml routerd:routerd-iad.yaml; do
  daemon=${pair%%:*} config="$examples/${pair#*:}"
  check "$daemon" "$config" || { cat "$tmp/check.out" >&2; fail "$daemon --check-config rejects $config"; }
  echo "$daemon --check-config ${pair#*:}: ok"

  # Broken copies: an unknown key, and a malformed health address.
  broken="$tmp/broken-${pair#*:}"
  { cat "$config"; echo "retry_forever: yes"; } >"$broken"
  code=0; check "$daemon" "$broken" || code=$?
  [[ $code -eq 1 ]] || fail "$daemon --check-config exited $code on $broken (want 1)"
  grep -q "$broken:[0-9]*: retry_forever: unknown key" "$tmp/check.out" ||
    { cat "$tmp/check.out" >&2; fail "$daemon did not name the file and the key"; }
  sed 's/^health: .*/health: {listen: "localhost:7480"}/' "$config" >"$broken"
  code=0; check "$daemon" "$broken" || code=$?
  [[ $code -eq 1 ]] || fail "$daemon --check-config exited $code on a bad health.listen (want 1)"
  grep -q "$broken:[0-9]*: health.listen: \"localhost\" is not an IP address" "$tmp/check.out" ||
    { cat "$tmp/check.out" >&2; fail "$daemon did not name health.listen"; }
  echo "$daemon --check-config on broken copies: refused, naming file and key"
done

code=0; "$root/usr/sbin/routerd" --no-such-flag >/dev/null 2>"$tmp/usage.out" || code=$?
[[ $code -eq 2 ]] && grep -q "usage: routerd --config FILE" "$tmp/usage.out" || fail "a bad flag did not exit 2 with the usage"
echo "PASS"
