#!/usr/bin/python3
"""Watches a tenant's workloads through Geodesic's telemetry relay (relay.proto).

Connects to a pathcomp replica with a tenant certificate (make-pki.sh
--tenants NAME issues tenant-NAME.crt/.key), calls Relay.Watch and prints every
event as a readable line (or, with --json, as one JSON object per line). Exits
0 after --count events (0: only at the timeout), 3 when --timeout passes
first, 2 on a refused call or bad arguments.

Needs Debian's python3-grpcio and Python stubs generated from the proto files:

  python3 -m grpc_tools.protoc -I proto --python_out=STUBS --grpc_python_out=STUBS \\
      proto/geodesic/v1/relay.proto proto/geodesic/v1/model.proto proto/geodesic/v1/plan.proto

Example:

  examples/relay_watch.py --stubs STUBS --server 127.0.0.1:7000 --ca pki/ca.crt \\
      --cert pki/tenant-acme.crt --key pki/tenant-acme.key --count 10
"""

import argparse
import datetime
import json
import os
import re
import sys

EXIT_OK, EXIT_REFUSED, EXIT_TIMEOUT = 0, 2, 3
STATE_NAMES = {0: "unknown", 1: "up", 2: "degraded", 3: "down"}


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Watch your workloads' paths through Geodesic's relay.")
    parser.add_argument("--server", required=True, help="pathcomp address, HOST:PORT")
    parser.add_argument("--ca", required=True, help="the CA certificate (ca.crt)")
    parser.add_argument("--cert", required=True, help="your certificate (tenant-NAME.crt)")
    parser.add_argument("--key", required=True, help="its key (tenant-NAME.key)")
    parser.add_argument("--stubs", required=True, help="directory of the Python stubs generated from proto/")
    parser.add_argument("--workload", action="append", default=[], help="only this workload (repeatable)")
    parser.add_argument("--tenant", default="", help="operators only: only this tenant's workloads")
    parser.add_argument("--server-name", default="", help="the name to expect in pathcomp's certificate")
    parser.add_argument("--count", type=int, default=0, help="exit after this many events (0: at the timeout)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to watch at most")
    parser.add_argument("--json", action="store_true", help="print each event as one JSON object per line")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[A-Za-z0-9.\-\[\]:]+:[0-9]{1,5}", args.server):
        parser.error("--server must be HOST:PORT, not %r" % args.server)
    if args.count < 0:
        parser.error("--count must be 0 or more")
    if not 0 < args.timeout <= 86400:
        parser.error("--timeout must be in (0, 86400] seconds")
    for flag in ("ca", "cert", "key"):
        if not os.path.isfile(getattr(args, flag)):
            parser.error("--%s %s: no such file" % (flag, getattr(args, flag)))
    if not os.path.isdir(os.path.join(args.stubs, "geodesic", "v1")):
        parser.error("--stubs %s has no geodesic/v1/ (generate them with grpc_tools.protoc, see --help)" % args.stubs)
    return args


def describe_path(path):
    route = " -> ".join(path.facility_ids) or "(none)"
    return "%s  %d us, loss %.2f%%" % (route, path.total_latency_us, 100 * path.loss_ratio)


def describe_hop(hop):
    measured = "measured" if hop.latency_measured else "inventory"
    return "%s -> %s over %s: %d us (%s), loss %.2f%%, %s" % (
        hop.from_facility_id, hop.to_facility_id, hop.link_id or "?", hop.latency_us, measured,
        100 * hop.loss_ratio, STATE_NAMES.get(hop.state, "unknown"))


def describe_workload(workload, indent="  "):
    lines = ["workload %s (%s%s) plan %d: %s" % (
        workload.workload_id, workload.kind, ", tenant " + workload.tenant if workload.tenant else "",
        workload.plan_generation, "routed" if workload.routed else "not routed: " + workload.unrouted_reason)]
    for number, path in enumerate(workload.paths, 1):
        lines.append("%spath %d (weight %d): %s" % (indent, number, path.weight, describe_path(path)))
        lines.extend(indent * 2 + describe_hop(hop) for hop in path.hops)
    for number, call in enumerate(workload.calls, 1):
        lines.append("%scall %d: %s@%s, service %d us" % (indent, number, call.service_id,
                                                          call.replica_facility_id, call.service_time_us))
        for name, path in (("there", call.there), ("back", call.back)):
            lines.append("%s%s: %s" % (indent * 2, name, describe_path(path)))
            lines.extend(indent * 3 + describe_hop(hop) for hop in path.hops)
    if workload.kind == "chain" and workload.routed:
        lines.append("%slatency: planned %d us, measured %d us, budget %d us%s" % (
            indent, workload.planned_latency_us, workload.measured_latency_us, workload.latency_budget_us,
            " (OVER BUDGET)" if workload.over_budget else ""))
    for dependency in workload.single_facility_dependencies:
        lines.append("%sdepends on facility %s alone: %s" % (indent, dependency.facility_id, dependency.reason))
    return lines


def routes_of(workload):
    paths = [">".join(path.facility_ids) for path in workload.paths]
    paths += ["%s@%s" % (call.service_id, call.replica_facility_id) for call in workload.calls]
    return ", ".join(paths) or "(no path)"


def describe_event(event):
    """The event as readable lines."""
    kind = event.WhichOneof("kind")
    if kind == "workload":
        return describe_workload(event.workload)
    if kind == "snapshot_done":
        done = event.snapshot_done
        return ["snapshot %s: %d workloads, plan generation %d" % (
            "resent" if done.resync else "complete", done.workloads, done.plan_generation)]
    if kind == "reroute":
        reroute = event.reroute
        return ["reroute %s at plan %d (cause: %s): %s => %s" % (
            reroute.workload_id, reroute.generation, reroute.cause, routes_of(reroute.previous),
            routes_of(reroute.current))] + describe_workload(reroute.current, "    ")
    if kind == "budget":
        budget = event.budget
        return ["budget %s: %s (planned %d us, measured %d us, budget %d us)" % (
            budget.workload_id, "OVER" if budget.over_budget else "back within", budget.planned_latency_us,
            budget.measured_latency_us, budget.latency_budget_us)]
    if kind == "dependency":
        dependency = event.dependency
        return ["dependency %s on facility %s %s: %s" % (
            dependency.dependency.workload_id, dependency.dependency.facility_id,
            "appeared" if dependency.appeared else "gone", dependency.dependency.reason)]
    if kind == "measurement":
        measurement = event.measurement
        return ["measurement %s:" % measurement.workload_id] + [
            "  " + describe_hop(hop) for hop in measurement.changed_hops]
    if kind == "removed":
        return ["removed %s" % event.removed.workload_id]
    return ["(an event this client does not know)"]


def main(argv):
    args = parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.stubs))
    import grpc  # Debian's python3-grpcio
    from google.protobuf import json_format
    from geodesic.v1 import relay_pb2, relay_pb2_grpc

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    credentials = grpc.ssl_channel_credentials(
        root_certificates=read(args.ca), private_key=read(args.key), certificate_chain=read(args.cert))
    options = [("grpc.ssl_target_name_override", args.server_name)] if args.server_name else []
    request = relay_pb2.RelayWatchRequest(workload_ids=args.workload, tenant=args.tenant)
    seen = 0
    with grpc.secure_channel(args.server, credentials, options=options) as channel:
        stream = relay_pb2_grpc.RelayStub(channel).Watch(request, timeout=args.timeout)
        try:
            for event in stream:
                if args.json:
                    print(json.dumps(json_format.MessageToDict(event, preserving_proto_field_name=True),
                                     sort_keys=True), flush=True)
                else:
                    stamp = datetime.datetime.fromtimestamp(event.at_unix_ms / 1000).strftime("%H:%M:%S.%f")[:-3]
                    lines = describe_event(event)
                    print("%s %s" % (stamp, lines[0]))
                    for line in lines[1:]:
                        print("             " + line)
                    sys.stdout.flush()
                seen += 1
                if args.count and seen >= args.count:
                    stream.cancel()
                    return EXIT_OK
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                if args.count:
                    print("relay_watch: timed out after %d of %d events" % (seen, args.count), file=sys.stderr)
                    return EXIT_TIMEOUT
                return EXIT_OK
            if error.code() == grpc.StatusCode.CANCELLED and args.count and seen >= args.count:
                return EXIT_OK
            print("relay_watch: %s: %s" % (error.code().name, error.details()), file=sys.stderr)
            return EXIT_REFUSED
    print("relay_watch: the server ended the stream after %d events" % seen, file=sys.stderr)
    return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
