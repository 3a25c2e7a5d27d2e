#!/usr/bin/env python3
"""The Kubernetes manifests render offline and carry valid daemon configs.

    kustomize_test.py SOURCE_DIR BUILD_DIR

Renders deploy/kubernetes/base and overlays/example with `kubectl kustomize`
($KUBECTL, else kubectl on the PATH; skipped, exit 77, only when there is
none), parses the YAML (python3-yaml) and:
  - runs every daemon config found in a rendered ConfigMap through that
    daemon's --check-config (BUILD_DIR/bin); the data key names the daemon
    (pathcomp*.yaml, site-agent*.yaml, routerd*.yaml); any other key fails;
  - checks each daemon container's probes: liveness GET /healthz, readiness
    GET /readyz, on the port its config's health.listen names;
  - checks that each daemon container's --config is a key of the ConfigMap
    mounted there, and that the certificate files its config names are in a
    mounted Secret;
  - checks the shape issue 19 asks for: pathcomp a 3-replica StatefulSet with a
    headless Service, required pod anti-affinity and a PodDisruptionBudget; etcd
    a 3-member StatefulSet; per facility a host-network site pod.
Temporary files go to a directory removed on exit, failed or not.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

SKIP = 77
DAEMONS = {"pathcomp": "pathcomp", "site-agent": "site_agent", "routerd": "routerd"}
failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def daemon_of(key):
    for prefix, daemon in DAEMONS.items():
        if key.startswith(prefix) and key.endswith(".yaml"):
            return daemon
    return None


def render(kubectl, directory):
    result = subprocess.run([kubectl, "kustomize", directory], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        fail(f"kubectl kustomize {directory} exited {result.returncode}:\n{result.stderr}")
        return []
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def check_configs(docs, build_dir, scratch, label):
    """Runs every daemon config of every ConfigMap through --check-config.
    Returns {configmap name: {key: parsed config}}."""
    configs = {}
    for doc in docs:
        if doc.get("kind") != "ConfigMap":
            continue
        name = doc["metadata"]["name"]
        for key, text in (doc.get("data") or {}).items():
            daemon = daemon_of(key)
            if daemon is None:
                fail(f"{label}: ConfigMap {name} key {key} names no daemon (pathcomp*, site-agent*, routerd*.yaml)")
                continue
            path = os.path.join(scratch, label, name, key)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as file:
                file.write(text)
            result = subprocess.run([os.path.join(build_dir, "bin", daemon), "--check-config", path],
                                    capture_output=True, text=True, timeout=60)
            if result.returncode != 0:
                fail(f"{label}: {daemon} --check-config rejects ConfigMap {name} key {key} "
                     f"(exit {result.returncode}):\n{result.stdout}{result.stderr}")
            else:
                print(f"{label}: {daemon} --check-config ConfigMap {name}/{key}: ok")
            configs.setdefault(name, {})[key] = yaml.safe_load(text)
    return configs


def workloads(docs, kind):
    return [doc for doc in docs if doc.get("kind") == kind]


def port_number(container, port):
    if isinstance(port, int):
        return port
    for declared in container.get("ports", []):
        if declared.get("name") == port:
            return declared["containerPort"]
    return None


def check_mounts(docs, configs, label):
    """Each daemon container's --config names a key of the ConfigMap mounted at
    that folder (for every pod of a StatefulSet, $(POD_NAME) = NAME-N), and the
    files its config names (tls, replication.tls) lie in a mounted Secret."""
    for doc in workloads(docs, "StatefulSet") + workloads(docs, "Deployment"):
        spec = doc["spec"]["template"]["spec"]
        volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
        pods = [doc["metadata"]["name"]]
        if doc["kind"] == "StatefulSet":
            pods = [f"{doc['metadata']['name']}-{i}" for i in range(doc["spec"].get("replicas", 1))]
        for container in spec["containers"]:
            args = container.get("args", [])
            if "--config" not in args:
                continue
            where = f"{label}: {doc['kind']} {doc['metadata']['name']} container {container['name']}"
            mounts = {mount["mountPath"]: volumes.get(mount["name"], {}) for mount in container.get("volumeMounts", [])}
            secret_dirs = {path for path, volume in mounts.items() if "secret" in volume}
            for pod in pods:
                path = args[args.index("--config") + 1].replace("$(POD_NAME)", pod)
                folder, key = os.path.split(path)
                config_map = mounts.get(folder, {}).get("configMap", {}).get("name")
                config = configs.get(config_map, {}).get(key)
                if config is None:
                    fail(f"{where}: --config {path}: no daemon config {key} in a ConfigMap mounted at {folder}")
                    continue
                for section in (config.get("tls"), (config.get("replication") or {}).get("tls")):
                    for file in (section or {}).values():
                        if os.path.dirname(file) not in secret_dirs:
                            fail(f"{where}: {path} names {file}, which is in no mounted Secret {sorted(secret_dirs)}")


def check_probes(docs, configs, label):
    """Each container that mounts a daemon config probes /healthz and /readyz
    on the port of that config's health.listen."""
    checked = 0
    for doc in workloads(docs, "StatefulSet") + workloads(docs, "Deployment"):
        spec = doc["spec"]["template"]["spec"]
        volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
        for container in spec["containers"]:
            mounted = []
            for mount in container.get("volumeMounts", []):
                config_map = volumes.get(mount["name"], {}).get("configMap", {}).get("name")
                if config_map in configs:
                    mounted.extend(configs[config_map].values())
            if not mounted:
                continue
            where = f"{label}: {doc['kind']} {doc['metadata']['name']} container {container['name']}"
            for probe_name, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
                probe = container.get(probe_name, {}).get("httpGet")
                if probe is None:
                    fail(f"{where}: no {probe_name} httpGet")
                    continue
                if probe.get("path") != path:
                    fail(f"{where}: {probe_name} asks {probe.get('path')}, not {path}")
                port = port_number(container, probe.get("port"))
                for config in mounted:
                    listen = (config.get("health") or {}).get("listen", "")
                    if not listen or int(listen.rsplit(":", 1)[1]) != port:
                        fail(f"{where}: {probe_name} port {port} is not the config's health.listen {listen!r}")
            checked += 1
    return checked


def find(docs, kind, name_prefix):
    return [doc for doc in docs if doc.get("kind") == kind and doc["metadata"]["name"].startswith(name_prefix)]


def check_base_shape(docs, label):
    pathcomp = find(docs, "StatefulSet", "pathcomp")
    if len(pathcomp) != 1 or pathcomp[0]["spec"].get("replicas") != 3:
        fail(f"{label}: want one pathcomp StatefulSet with 3 replicas")
    else:
        spec = pathcomp[0]["spec"]
        anti = spec["template"]["spec"].get("affinity", {}).get("podAntiAffinity", {})
        if not anti.get("requiredDuringSchedulingIgnoredDuringExecution"):
            fail(f"{label}: pathcomp has no required pod anti-affinity")
        services = [s for s in find(docs, "Service", "pathcomp") if s["metadata"]["name"] == spec.get("serviceName")]
        if not services or services[0]["spec"].get("clusterIP") != "None":
            fail(f"{label}: pathcomp's serviceName is not a headless Service")
    if not find(docs, "PodDisruptionBudget", "pathcomp"):
        fail(f"{label}: pathcomp has no PodDisruptionBudget")
    etcd = find(docs, "StatefulSet", "etcd")
    if len(etcd) != 1 or etcd[0]["spec"].get("replicas") != 3:
        fail(f"{label}: want one etcd StatefulSet with 3 members")
    for doc in docs:
        if doc.get("kind") != "Namespace" and doc["metadata"].get("namespace") != "geodesic":
            fail(f"{label}: {doc['kind']} {doc['metadata']['name']} is not in namespace geodesic")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source_dir, build_dir = sys.argv[1:]
    kubectl = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if not kubectl:
        print("SKIP: no kubectl found (deploy/install-deps.sh installs Debian's kubernetes-client)")
        return SKIP
    version = subprocess.run([kubectl, "version", "--client"], capture_output=True, text=True)
    print(f"kubectl: {kubectl}: {version.stdout.strip().splitlines()[0] if version.stdout else '?'}")
    root = os.path.join(source_dir, "deploy", "kubernetes")
    with tempfile.TemporaryDirectory(prefix="geodesic-kustomize-test.") as scratch:
        for label, directory, want_configs, want_sites in (("base", "base", 3, 0),
                                                           ("example", "overlays/example", 9, 3)):
            docs = render(kubectl, os.path.join(root, directory))
            if not docs:
                continue
            configs = check_configs(docs, build_dir, scratch, label)
            count = sum(len(keys) for keys in configs.values())
            if count != want_configs:
                fail(f"{label}: {count} daemon configs rendered, want {want_configs}")
            check_mounts(docs, configs, label)
            probed = check_probes(docs, configs, label)
            print(f"{label}: {count} daemon configs checked, {probed} containers' probes match their configs")
            check_base_shape(docs, label)
            sites = find(docs, "Deployment", "site-")
            if len(sites) != want_sites:
                fail(f"{label}: {len(sites)} facility site pods, want {want_sites}")
            for site in sites:
                if not site["spec"]["template"]["spec"].get("hostNetwork"):
                    fail(f"{label}: {site['metadata']['name']} is not on the host network")
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
