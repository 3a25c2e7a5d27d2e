#!/usr/bin/env python3
"""The units' seccomp and socket-family limits fit what the daemons really do.

    syscall_filter_test.py SOURCE_DIR BUILD_DIR

This machine runs no systemd, so the units cannot be started here; instead
pathcomp, a site agent and a routerd (BGP with TCP-MD5 to a closed port,
probing, the local event socket, health endpoints) run on loopback under
`strace -f` until each answers 200 on /readyz, and every system call they made
must be one the units' SystemCallFilter= allows (deploy/systemd/hardening.inc,
sets expanded by `systemd-analyze syscall-filter`), every socket of a family
RestrictAddressFamilies= allows. Skipped (77) without strace. Processes and
the temporary directory are removed on exit, failed or not.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import shutil

SKIP = 77
DEADLINE_S = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unit_limits(source_dir):
    """(allowed syscall sets, denied syscall sets, allowed families) from hardening.inc."""
    allowed, denied, families = [], [], []
    with open(os.path.join(source_dir, "deploy", "systemd", "hardening.inc")) as file:
        for line in file:
            key, _, value = line.strip().partition("=")
            if key == "SystemCallFilter":
                (denied if value.startswith("~") else allowed).extend(value.lstrip("~").split())
            elif key == "RestrictAddressFamilies":
                families.extend(value.split())
    return allowed, denied, families


def expand(name, seen):
    """The system calls of a systemd syscall set (recursively) or a single call."""
    if not name.startswith("@"):
        return {name}
    if name in seen:
        return set()
    seen.add(name)
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True, check=True).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        entry = line.strip()
        if entry and not entry.startswith("#"):
            calls |= expand(entry, seen)
    return calls


def ready(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


def tracee_of(strace):
    """The pid strace started (its child)."""
    try:
        with open(f"/proc/{strace.pid}/task/{strace.pid}/children") as file:
            children = file.read().split()
        return int(children[0]) if children else None
    except OSError:
        return None


def main():
    source_dir, build_dir = sys.argv[1:3]
    if not shutil.which("strace"):
        print("SKIP: strace is missing (deploy/install-deps.sh installs it)")
        return SKIP
    allowed_sets, denied_sets, families = unit_limits(source_dir)
    allowed = set().union(*(expand(name, set()) for name in allowed_sets))
    allowed -= set().union(*(expand(name, set()) for name in denied_sets))
    print(f"units allow {len(allowed)} system calls ({' '.join(allowed_sets)} minus {' '.join(denied_sets)}), "
          f"families {' '.join(families)}")

    failures = []
    traces = []
    with tempfile.TemporaryDirectory(prefix="geodesic-syscall-test.") as work:
        try:
            subprocess.run([os.path.join(source_dir, "deploy", "pki", "make-pki.sh"), "--out", f"{work}/pki",
                            "--facilities", "iad,chi", "--replicas", "pc1"], check=True, capture_output=True)
            ports = {name: free_port() for name in ("grpc", "pathcomp", "agent", "routerd", "probe", "bgp")}
            pathcomp = [{"address": f"127.0.0.1:{ports['grpc']}"}]
            configs = {
                "pathcomp": f"""replica_id: pc1
listen: 127.0.0.1:{ports['grpc']}
state_dir: state/pathcomp
topology: {source_dir}/deploy/examples/backbone.yaml
tls: {{ca: pki/ca.crt, cert: pki/pathcomp-pc1.crt, key: pki/pathcomp-pc1.key}}
health: {{listen: 127.0.0.1:{ports['pathcomp']}}}
""",
                "routerd": f"""facility: iad
pathcomp: [{{address: "{pathcomp[0]['address']}"}}]
tls: {{ca: pki/ca.crt, cert: pki/site-iad-routerd.crt, key: pki/site-iad-routerd.key}}
state_dir: state/routerd
agent_socket: {work}/agent.sock
health: {{listen: 127.0.0.1:{ports['routerd']}}}
bgp:
  local_as: 65001
  router_id: 10.1.255.1
  peers: [{{address: 127.0.0.1, port: {ports['bgp']}, remote_as: 65001, password: secret}}]
  next_hops:                      # every link leaving iad, both families (a plan needing one missing is refused)
    - {{link: iad-chi, ipv4: 192.0.2.2, ipv6: "2001:db8::2"}}
    - {{link: iad-nyc, ipv4: 192.0.2.6, ipv6: "2001:db8::6"}}
    - {{link: iad-dfw, ipv4: 192.0.2.10, ipv6: "2001:db8::a"}}
    - {{link: iad-ams, ipv4: 192.0.2.14, ipv6: "2001:db8::e"}}
""",
                "site_agent": f"""facility: iad
pathcomp: [{{address: "{pathcomp[0]['address']}"}}]
tls: {{ca: pki/ca.crt, cert: pki/site-iad-agent.crt, key: pki/site-iad-agent.key}}
routerd_socket: {work}/agent.sock
health: {{listen: 127.0.0.1:{ports['agent']}}}
probe: {{listen: "127.0.0.1:{ports['probe']}", interval_ms: 50}}
links: [{{id: iad-chi, peer: "127.0.0.1:{free_port()}"}}, {{id: iad-nyc}}]
""",
            }
            health = {"pathcomp": ports["pathcomp"], "routerd": ports["routerd"], "site_agent": ports["agent"]}
            for daemon in ("pathcomp", "routerd", "site_agent"):
                with open(f"{work}/{daemon}.yaml", "w") as file:
                    file.write(configs[daemon])
                log = open(f"{work}/{daemon}.log", "w")
                strace = subprocess.Popen(["strace", "-f", "-qq", "-o", f"{work}/{daemon}.strace",
                                           os.path.join(build_dir, "bin", daemon), "--config", f"{work}/{daemon}.yaml"],
                                          stdout=log, stderr=subprocess.STDOUT, cwd=work)
                traces.append((daemon, strace))
            deadline = time.monotonic() + DEADLINE_S
            waiting = set(health)
            while waiting and time.monotonic() < deadline:
                waiting = {daemon for daemon in waiting if not ready(health[daemon])}
                if waiting:
                    time.sleep(0.1)
            for daemon in sorted(waiting):
                failures.append(f"{daemon} did not answer 200 on /readyz within {DEADLINE_S} s:\n"
                                + open(f"{work}/{daemon}.log").read()[-3000:])
        finally:
            for daemon, strace in traces:
                pid = tracee_of(strace)
                if pid:
                    os.kill(pid, signal.SIGTERM)
            for daemon, strace in traces:
                try:
                    strace.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    pid = tracee_of(strace)
                    if pid:
                        os.kill(pid, signal.SIGKILL)
                    strace.kill()
                    strace.wait()

        for daemon, _ in traces:
            calls, sockets, md5 = set(), set(), False
            with open(f"{work}/{daemon}.strace") as file:
                for line in file:
                    md5 = md5 or "TCP_MD5SIG" in line
                    match = re.match(r"^\d+ ([a-z_0-9]+)\((AF_[A-Z0-9]+)?", line)
                    if match:
                        calls.add(match.group(1))
                        if match.group(1) in ("socket", "socketpair") and match.group(2):
                            sockets.add(match.group(2))
            outside = sorted(calls - allowed)
            foreign = sorted(sockets - set(families))
            print(f"{daemon}: {len(calls)} distinct system calls, socket families {' '.join(sorted(sockets))}")
            if daemon == "routerd" and not md5:
                failures.append("routerd never set TCP_MD5SIG: the BGP session with a password was not exercised")
            if outside:
                failures.append(f"{daemon} made system calls the units' SystemCallFilter refuses: {' '.join(outside)}")
            if foreign:
                failures.append(f"{daemon} opened sockets RestrictAddressFamilies refuses: {' '.join(foreign)}")
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    if failures:
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
