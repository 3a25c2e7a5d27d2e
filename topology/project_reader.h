#pragma once
// Reads the project's own topology format (YAML, or the same structure as
// JSON; deploy/examples/backbone.yaml is the commented reference):
//
//   facilities: [{id, name, region, position: {lat, lon}, prefixes: [cidr]}]
//   nodes:      [{id, facility, role: backbone|fabric}]
//   links:      [{id, from, to, reverse, capacity_gbps, metric, latency_us, srlgs}]
//   fabrics:    [{facility, planes, rails, gpus, nic_speed_gbps, backbone_uplink_gbps,
//                 layers: [{name, switch_count, downlink_ports, uplink_ports,
//                           port_speed_gbps}]}]                      (bottom-up)
//   services:   [{id, replicas: [facility], service_time_us}]
//   workloads:  [{id, kind: elephant, src, dst_prefix, demand_gbps, priority}
//                | {id, kind: chain, origin, services: [service], latency_budget_us}]
//               either kind may name its `tenant` (an id; omitted = the operators' own)
//
// facilities, nodes and links are required; the rest optional.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "topology/inventory.h"

namespace geodesic::topology {

// Parses and validates a topology file (.yaml, .yml or .json). Errors are
// InvalidArgument and list every problem found, one per line, each as
// "file:line: key.path: reason" (unknown references, duplicate ids, bad
// prefixes, values out of range, unknown keys, ...); NotFound when the file
// cannot be read.
[[nodiscard]] absl::StatusOr<Topology> LoadTopologyFile(const std::string& path);
// Same, from text; `origin` stands in for the file name in errors.
[[nodiscard]] absl::StatusOr<Topology> ParseTopology(const std::string& yaml_text,
                                                     const std::string& origin);

// A file of workloads only (`workloads:` as above), whose references are
// checked against `known` (its facilities with their prefixes, and services):
// what `tectl workload add --file` sends. Errors as ParseTopology's; an empty
// list is an error too.
[[nodiscard]] absl::StatusOr<std::vector<v1::Workload>> ParseWorkloads(const std::string& yaml_text,
                                                                      const std::string& origin,
                                                                      const Topology& known);

}  // namespace geodesic::topology
