#pragma once
// A backbone inventory: facilities, nodes, links, services and workloads, as
// the project's own YAML topology format describes them (see
// deploy/examples/backbone.yaml for a commented example).
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"

namespace geodesic::topology {

struct Topology {
  std::vector<v1::Facility> facilities;
  std::vector<v1::Node> nodes;
  std::vector<v1::Link> links;  // directed; src/dst facility filled in
  std::vector<v1::Fabric> fabrics;  // at most one per facility
  std::vector<v1::Service> services;
  std::vector<v1::Workload> workloads;
};

// Fiber latency assumed when a link gives none: light in fiber covers ~200 km
// per ms and fiber routes run ~25% longer than the great circle.
inline constexpr double kFiberRouteFactor = 1.25;
inline constexpr double kFiberUsPerKm = 5.0;

// Great-circle distance in km.
double GreatCircleKm(const v1::GeoPosition& a, const v1::GeoPosition& b);

// Parses and validates a topology file. Errors name the file and key, and list
// every problem found (unknown references, duplicate ids, bad prefixes, ...).
[[nodiscard]] absl::StatusOr<Topology> LoadTopologyFile(const std::string& path);
[[nodiscard]] absl::StatusOr<Topology> ParseTopology(const std::string& yaml_text,
                                                     const std::string& origin);

// True for "a.b.c.d/len" and IPv6 "x::/len" with host bits clear.
bool IsValidPrefix(const std::string& cidr);

}  // namespace geodesic::topology
