#!/usr/bin/env python3
"""The operations guide's configs are real: every YAML block of deploy/README.md
that is a daemon's config goes through that daemon's --check-config.

Usage: guide_configs_test.py SOURCE_DIR BINARY_DIR
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def daemon_of(config: str) -> str | None:
    """Which daemon a config block is for, by the keys only it has."""
    keys = set(re.findall(r"^([a-z_]+):", config, re.M))
    if "replica_id" in keys:
        return "pathcomp"
    if "facility" in keys and ("bgp" in keys or "state_dir" in keys):
        return "routerd"
    if "facility" in keys:
        return "site_agent"
    return None


def main() -> int:
    source, binary = Path(sys.argv[1]), Path(sys.argv[2])
    guide = (source / "deploy" / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", guide, re.S)
    checked, failures = 0, []
    with tempfile.TemporaryDirectory(prefix="geodesic-guide-") as work:
        for n, block in enumerate(blocks):
            daemon = daemon_of(block)
            if daemon is None:
                continue
            path = Path(work) / f"guide-{n}-{daemon}.yaml"
            path.write_text(block)
            run = subprocess.run([str(binary / "bin" / daemon), "--check-config", str(path)],
                                 capture_output=True, text=True, timeout=60)
            checked += 1
            if run.returncode != 0:
                failures.append(f"deploy/README.md yaml block {n + 1} ({daemon}):\n{run.stdout}{run.stderr}")
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"{checked} configs of the operations guide checked, {len(failures)} refused")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
