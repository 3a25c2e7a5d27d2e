#!/usr/bin/env python3
"""deploy/prometheus as Prometheus itself reads it (promtool, Debian package
prometheus): the scrape configs are valid, the rules and alerts load, the
alerts' unit tests pass, the alerts the operations guide names exist, the
Grafana dashboard is a well-formed dashboard whose every query parses, and
every metric a rule or a panel names is one a daemon declares
(geodesic-metrics-doc --names) or a recording rule defines.

Usage: prometheus_rules_test.py SOURCE_DIR BINARY_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

REQUIRED_ALERTS = {
    "GeodesicLeaderAbsent", "GeodesicSitePlanLagging", "GeodesicLinkDown", "GeodesicChainsOverBudget",
    "GeodesicFailStaticEngaged", "GeodesicEtcdUnreachable",
}
METRIC = re.compile(r"\b(geodesic[_:][a-zA-Z0-9_:]*)")

failures = []


def fail(message):
    failures.append(message)
    print(f"FAIL: {message}")


def promtool(*args, cwd):
    result = subprocess.run(["promtool", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"promtool {' '.join(args)}:\n{result.stdout}{result.stderr}")
    return result


def names_in(expr):
    # Label values ({link="geodesic_x"}) are not metric names.
    return set(METRIC.findall(re.sub(r'"[^"]*"', '""', expr)))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source_dir, binary_dir = sys.argv[1:]
    prometheus_dir = os.path.join(source_dir, "deploy", "prometheus")
    if shutil.which("promtool") is None:
        sys.exit("promtool is not installed: run deploy/install-deps.sh (Debian package prometheus)")

    # The lab's config as it is; the production one with its certificate paths in a scratch dir.
    promtool("check", "config", "prometheus.yml", cwd=prometheus_dir)
    with tempfile.TemporaryDirectory(prefix="geodesic-prometheus-") as scratch:
        with open(os.path.join(prometheus_dir, "scrape-production.yml")) as f:
            production = f.read().replace("/etc/geodesic/pki/", scratch + "/")
        for name in ("ca.crt", "operator-prometheus.crt", "operator-prometheus.key"):
            open(os.path.join(scratch, name), "w").close()
        with open(os.path.join(scratch, "scrape-production.yml"), "w") as f:
            f.write(production)
        promtool("check", "config", "scrape-production.yml", cwd=scratch)

    promtool("check", "rules", "rules.yml", "alerts.yml", cwd=prometheus_dir)
    promtool("test", "rules", "alerts_test.yml", cwd=prometheus_dir)

    declared = set(subprocess.run([os.path.join(binary_dir, "bin", "geodesic-metrics-doc"), "--names"], check=True,
                                  capture_output=True, text=True).stdout.split())
    recorded, alerts, queries = set(), set(), []
    for file_name in ("rules.yml", "alerts.yml"):
        with open(os.path.join(prometheus_dir, file_name)) as f:
            for group in yaml.safe_load(f)["groups"]:
                for rule in group["rules"]:
                    if "record" in rule:
                        recorded.add(rule["record"])
                    else:
                        alerts.add(rule["alert"])
                    queries.append((f"{file_name}: {rule.get('record') or rule.get('alert')}", rule["expr"]))
    for missing in sorted(REQUIRED_ALERTS - alerts):
        fail(f"alerts.yml has no {missing}")

    with open(os.path.join(prometheus_dir, "grafana-backbone.json")) as f:
        dashboard = json.load(f)
    for key in ("uid", "title", "panels", "schemaVersion", "templating"):
        if key not in dashboard:
            fail(f"grafana-backbone.json: no {key}")
    ids = [panel.get("id") for panel in dashboard.get("panels", [])]
    if len(ids) != len(set(ids)) or None in ids:
        fail("grafana-backbone.json: panel ids must be present and unique")
    dashboard_queries = []
    for panel in dashboard.get("panels", []):
        for key in ("title", "type", "gridPos", "targets"):
            if key not in panel:
                fail(f"grafana-backbone.json: panel {panel.get('id')} has no {key}")
        if not panel.get("targets"):
            fail(f"grafana-backbone.json: panel \"{panel.get('title')}\" queries nothing")
        for target in panel.get("targets", []):
            if not target.get("expr"):
                fail(f"grafana-backbone.json: panel \"{panel.get('title')}\" has an empty query")
                continue
            dashboard_queries.append((f"grafana-backbone.json: \"{panel['title']}\"", target["expr"]))
    queries += dashboard_queries

    # Every dashboard query parses as PromQL: promtool checks it as a recording rule.
    with tempfile.TemporaryDirectory(prefix="geodesic-dashboard-") as scratch:
        rules = {"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:query_{i}", "expr": expr} for i, (_, expr) in enumerate(dashboard_queries)]}]}
        with open(os.path.join(scratch, "dashboard_queries.yml"), "w") as f:
            yaml.safe_dump(rules, f)
        promtool("check", "rules", "dashboard_queries.yml", cwd=scratch)

    known = declared | recorded | {"up"}
    named = set()
    for where, expr in queries:
        for name in sorted(names_in(expr)):
            named.add(name)
            if name not in known:
                fail(f"{where} names {name}, which no daemon declares and no rule records")
    if not failures:
        print(f"PASS: {len(alerts)} alerts ({len(REQUIRED_ALERTS)} required), {len(recorded)} recording rules, "
              f"{len(dashboard_queries)} dashboard queries; {len(named)} metrics named, all declared or recorded")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
